#!/usr/bin/env python3
"""Side-by-side proxy benchmark (`make bench`): one run, candidates alternating.

Candidates, all in front of the same sink (`formgate demo-upstream --drain`, one event loop):
  direct     the client talks to the sink
  nginx      nginx as a plain streaming proxy (proxy_request_buffering off, upstream keepalive,
             reuseport, access log off, one worker per core)
  reencode   FormGate re-encoding multipart bodies under a new boundary (no rules)
  rules      FormGate with sniff + rename + filename + inject
  digests    the rules plus sha256 and size digests of every file

Cases: one 1 GiB upload; 8 concurrent 128 MiB uploads (bodies generated on the fly from a
random 1 MiB block, never stored); 4 KiB uploads from wrk with 64 connections. Each case runs
REPEATS times per candidate (alternating order); medians are reported with the ratios to
nginx and to direct, with the proxy's peak RSS and CPU seconds (and the sink's CPU).

Writes docs/benchmarks.md and docs/benchmarks.png (gnuplot). Environment: BENCH_REPEATS (3),
BENCH_LARGE_MIB (1024), BENCH_SMALL_SECONDS (8), BENCH_CANDIDATES (all), BENCH_CASES ("1x 8x small";
a subset only prints), BENCH_RSS_GIB (1: the size of each of the 8 uploads of the memory check; 0
skips it).
"""
import json, os, random, re, shutil, signal, socket, statistics, subprocess, sys, tempfile, threading, time

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
binary = os.environ.get("BENCH_BINARY", os.path.join(root, ".build/release/formgate"))
work = os.path.join(root, ".build/bench")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
repeats = int(os.environ.get("BENCH_REPEATS", "3"))
large_mib = int(os.environ.get("BENCH_LARGE_MIB", "1024"))
small_seconds = int(os.environ.get("BENCH_SMALL_SECONDS", "8"))
candidates = os.environ.get("BENCH_CANDIDATES", "direct nginx reencode rules digests").split()
cores = os.cpu_count() or 1
processes = []


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(port):
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"bench: nothing listens on {port}")


def spawn(command, **kwargs):
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
    processes.append(process)
    return process


def stop(process):
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def tree(pid):
    """The process and its children (nginx's workers)."""
    pids = [pid]
    try:
        children = open(f"/proc/{pid}/task/{pid}/children").read().split()
    except OSError:
        children = []
    return pids + [int(child) for child in children]


def cpu_seconds(pid):
    total = 0
    for each in tree(pid):
        try:
            fields = open(f"/proc/{each}/stat").read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total / os.sysconf("SC_CLK_TCK")


def rss_kib(pid):
    total = 0
    for each in tree(pid):
        try:
            for line in open(f"/proc/{each}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


class Sampler:
    """Peak RSS of a process tree, sampled every 20 ms."""

    def __init__(self, pid):
        self.pid, self.peak, self.running = pid, 0, True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while self.running:
            self.peak = max(self.peak, rss_kib(self.pid)) if self.pid else 0
            time.sleep(0.02)

    def stop(self):
        self.running = False
        self.thread.join()
        return self.peak


# --- the sink and the candidates
sink_port = free_port()
sink = spawn([binary, "demo-upstream", "--listen", f"127.0.0.1:{sink_port}", "--drain"])
wait_for(sink_port)

rules = """    multipart:
      rename_fields: { upload: file }
      sniff: { bytes: 4096, content_type: override }
      filename: "{field}-{uuid}{ext}"
      inject: [{ name: via, value: formgate }]
"""


def formgate(kind):
    port = free_port()
    config = os.path.join(work, f"{kind}.yaml")
    route = {"reencode": "    multipart: {}\n", "rules": rules,
             "digests": rules + "      digest: { algorithms: [sha256, size] }\n"}[kind]
    with open(config, "w") as handle:
        handle.write(f"listen: 127.0.0.1:{port}\nworkers: {cores}\nupstream: http://127.0.0.1:{sink_port}\n"
                     f"access_log: off\nlimits: {{ body_bytes: 64GiB, file_bytes: 64GiB }}\n"
                     f"routes:\n  - match: {{ path: /upload }}\n" + route)
    process = spawn([binary, "run", "-c", config])
    wait_for(port)
    return process, port


def nginx():
    port = free_port()
    temp = os.path.join(work, "nginx")
    os.makedirs(temp, exist_ok=True)
    config = os.path.join(temp, "nginx.conf")
    with open(config, "w") as handle:
        handle.write(f"""worker_processes {cores};
daemon off;
pid {temp}/nginx.pid;
error_log {temp}/error.log;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    upstream sink {{ server 127.0.0.1:{sink_port}; keepalive 128; }}
    server {{
        listen 127.0.0.1:{port} reuseport;
        client_max_body_size 0;
        location / {{
            proxy_pass http://sink;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_request_buffering off;
            proxy_buffering off;
        }}
    }}
}}
""")
    process = spawn([shutil.which("nginx") or "/usr/sbin/nginx", "-c", config, "-p", temp])
    wait_for(port)
    return process, port


def start(candidate):
    if candidate == "direct":
        return None, sink_port
    if candidate == "nginx":
        return nginx()
    return formgate(candidate)


# --- load
block = random.Random(1).randbytes(1 << 20)
BOUNDARY = "----BenchBoundary7MA4YWxkTrZu0gW"


def upload(port, size, results, index):
    head_part = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nbench\r\n"
                 f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"big.bin\"\r\n"
                 f"Content-Type: application/octet-stream\r\n\r\n").encode()
    tail = f"\r\n--{BOUNDARY}--\r\n".encode()
    length = len(head_part) + size + len(tail)
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
        sock.sendall((f"POST /upload HTTP/1.1\r\nHost: bench\r\nContent-Type: multipart/form-data; "
                      f"boundary={BOUNDARY}\r\nContent-Length: {length}\r\n\r\n").encode() + head_part)
        view = memoryview(block)
        left = size
        while left > 0:
            count = min(left, len(block))
            sock.sendall(view[:count])
            left -= count
        sock.sendall(tail)
        reply = b""
        while b"\r\n\r\n" not in reply:
            chunk = sock.recv(65536)
            if not chunk:
                break
            reply += chunk
        results[index] = reply.split(b" ", 2)[1] if reply.startswith(b"HTTP/1.1 ") else b"none"


def large(port, count, size):
    results = [None] * count
    threads = [threading.Thread(target=upload, args=(port, size, results, i)) for i in range(count)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if any(status != b"200" for status in results):
        raise RuntimeError(f"statuses {results}")
    return count * size / elapsed / 1e6


small_body = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nbench\r\n"
              f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"small.png\"\r\n"
              f"Content-Type: image/png\r\n\r\n").encode() + b"\x89PNG\r\n\x1a\n" + random.Random(2).randbytes(
    4096 - 8) + f"\r\n--{BOUNDARY}--\r\n".encode()
lua = os.path.join(work, "post.lua")
with open(lua, "w") as handle:
    handle.write('wrk.method = "POST"\n')
    handle.write(f'wrk.headers["Content-Type"] = "multipart/form-data; boundary={BOUNDARY}"\n')
    handle.write("wrk.body = \"" + "".join(f"\\{byte:03d}" for byte in small_body) + "\"\n")
    handle.write("""
local errors = 0
response = function(status, headers, body)
  if status ~= 200 then errors = errors + 1 end
end
done = function(summary, latency, requests)
  io.write(string.format("non200 %d\\n", errors))
end
""")


def small(port):
    result = subprocess.run([shutil.which("wrk"), "-t", "2", "-c", "64", "-d", f"{small_seconds}s", "--latency",
                             "-s", lua, f"http://127.0.0.1:{port}/upload"], capture_output=True, text=True)
    text = result.stdout
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    p99 = re.search(r"99%\s+([\d.]+)(us|ms|s)", text)
    p99_ms = float(p99.group(1)) * {"us": 0.001, "ms": 1, "s": 1000}[p99.group(2)]
    bad = int(re.search(r"non200 (\d+)", text).group(1))
    errors = re.search(r"Socket errors: (.*)", text)
    if bad or errors:
        raise RuntimeError(f"wrk: {bad} non-200, {errors.group(0) if errors else ''}")
    return rate, p99_ms


def mib(count):
    return f"{count // 1024} GiB" if count % 1024 == 0 else f"{count} MiB"


cases = [(f"1 × {mib(large_mib)}", lambda port: large(port, 1, large_mib << 20)),
         (f"8 × {mib(large_mib // 8)}", lambda port: large(port, 8, (large_mib // 8) << 20)),
         ("4 KiB × 64 conns", small)]
# BENCH_CASES picks some of them by keyword (1x, 8x, small); a partial run prints its table but
# leaves docs/ and the README alone.
wanted = os.environ.get("BENCH_CASES", "1x 8x small").split()
partial = len(wanted) < 3
cases = [case for case, key in zip(cases, ["1x", "8x", "small"]) if key in wanted]
measured = {candidate: {name: [] for name, _ in cases} for candidate in candidates}
peaks = {candidate: {name: [] for name, _ in cases} for candidate in candidates}
cpu = {candidate: {name: [] for name, _ in cases} for candidate in candidates}
sink_cpu = {candidate: {name: [] for name, _ in cases} for candidate in candidates}

began = time.time()
try:
    for round_index in range(repeats):
        order = candidates if round_index % 2 == 0 else list(reversed(candidates))
        for name, run in cases:
            for candidate in order:
                process, port = start(candidate)
                pid = process.pid if process else 0
                sampler = Sampler(pid)
                cpu_before, sink_before = (cpu_seconds(pid) if pid else 0), cpu_seconds(sink.pid)
                result = run(port)
                cpu_after, sink_after = (cpu_seconds(pid) if pid else 0), cpu_seconds(sink.pid)
                peak = sampler.stop()
                if process:
                    stop(process)
                measured[candidate][name].append(result)
                peaks[candidate][name].append(peak)
                cpu[candidate][name].append(cpu_after - cpu_before)
                sink_cpu[candidate][name].append(sink_after - sink_before)
                shown = f"{result[0]:,.0f} req/s p99 {result[1]:.1f} ms" if isinstance(result, tuple) else f"{result:,.0f} MB/s"
                print(f"bench: round {round_index + 1} {name:17} {candidate:9} {shown}, peak RSS {peak / 1024:.1f} MiB, "
                      f"CPU {cpu_after - cpu_before:.1f} s (sink {sink_after - sink_before:.1f} s)", flush=True)
    # Memory bound at scale: 8 concurrent uploads of BENCH_RSS_GIB (1) GiB each through the
    # heaviest FormGate candidate, once.
    heavy = next((c for c in ("digests", "rules", "reencode") if c in candidates), None)
    rss_gib = int(os.environ.get("BENCH_RSS_GIB", "1"))
    if heavy and rss_gib > 0:
        process, port = start(heavy)
        sampler = Sampler(process.pid)
        rate = large(port, 8, rss_gib << 30)
        big_peak = (heavy, rss_gib, rate, sampler.stop())
        stop(process)
        print(f"bench: 8 × {rss_gib} GiB through {heavy}: {rate:,.0f} MB/s, peak RSS {big_peak[3] / 1024:.1f} MiB",
              flush=True)
    else:
        big_peak = None
finally:
    for process in processes:
        if process.poll() is None:
            stop(process)


def median(values):
    return statistics.median(values)


def value(candidate, name):
    results = measured[candidate][name]
    if isinstance(results[0], tuple):
        return median([r[0] for r in results]), median([r[1] for r in results])
    return median(results), None


def ratio(candidate, name, reference):
    if reference not in measured:
        return "—"
    return f"{value(candidate, name)[0] / value(reference, name)[0]:.2f}×"


lines = ["# Benchmarks", "",
         f"`make bench` (`scripts/bench.py`), {time.strftime('%Y-%m-%d')}, release build, {cores} cores "
         f"({open('/proc/cpuinfo').read().split('model name')[1].split(':')[1].splitlines()[0].strip()}), loopback; "
         "load generator, proxy and sink share the cores. Medians of "
         f"{repeats} runs per case, candidates alternating; ratios are to nginx and to direct from the same run. "
         "Sink: `formgate demo-upstream --drain` (one event loop). Large uploads stream a random 1 MiB block from "
         "Python (`sendall`); small uploads are 4 KiB multipart bodies from wrk (2 threads, 64 connections).", "",
         "| candidate | case | result | × nginx | × direct | peak RSS | proxy CPU s | sink CPU s |",
         "|---|---|---:|---:|---:|---:|---:|---:|"]
for candidate in candidates:
    for name, _ in cases:
        rate, p99 = value(candidate, name)
        shown = f"{rate:,.0f} req/s, p99 {p99:.1f} ms" if p99 is not None else f"{rate:,.0f} MB/s"
        rss = "—" if candidate == "direct" else f"{median(peaks[candidate][name]) / 1024:.1f} MiB"
        lines.append(f"| {candidate} | {name} | {shown} | {ratio(candidate, name, 'nginx')} | "
                     f"{ratio(candidate, name, 'direct')} | {rss} | {median(cpu[candidate][name]):.1f} | "
                     f"{median(sink_cpu[candidate][name]):.1f} |")
if big_peak:
    lines += ["", f"Memory at scale: 8 concurrent {big_peak[1]} GiB uploads through `{big_peak[0]}`, once: "
              f"{big_peak[2]:,.0f} MB/s, peak RSS {big_peak[3] / 1024:.1f} MiB."]
lines += ["", "![throughput per candidate](benchmarks.png)", "",
          f"Whole run: {time.time() - began:.0f} s. Raw results per round are printed by `make bench`.", ""]

if partial:
    print("\n".join(lines[4:4 + 2 + len(candidates) * len(cases)]))
    sys.exit(0)
data = os.path.join(work, "plot.dat")
with open(data, "w") as handle:
    for candidate in candidates:
        handle.write(f"{candidate} " + " ".join(f"{value(candidate, name)[0]:.0f}" for name, _ in cases) + "\n")
gnuplot = shutil.which("gnuplot")
if gnuplot:
    script = f"""set terminal pngcairo size 1000,420 font ",10"
set output "{os.path.join(root, 'docs/benchmarks.png')}"
set multiplot layout 1,2 title "FormGate vs nginx vs direct ({time.strftime('%Y-%m-%d')}, {cores} cores, loopback)"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set key top right
set grid ytics
set yrange [0:*]
set ylabel "MB/s"
set title "large uploads"
plot "{data}" using 2:xtic(1) title "1 x {mib(large_mib)}", "" using 3 title "8 x {mib(large_mib // 8)}"
set ylabel "requests/s"
set title "4 KiB uploads, 64 connections"
plot "{data}" using 4:xtic(1) title "req/s" lc rgb "#4a7"
unset multiplot
"""
    subprocess.run([gnuplot], input=script, text=True, check=True)
else:
    lines.append("(gnuplot missing: no plot)")
os.makedirs(os.path.join(root, "docs"), exist_ok=True)
open(os.path.join(root, "docs/benchmarks.md"), "w").write("\n".join(lines))
# The README carries the same table between its bench markers.
readme_path = os.path.join(root, "README.md")
readme = open(readme_path).read()
start, end = "<!-- bench:start -->", "<!-- bench:end -->"
if start in readme and end in readme:
    table = "\n".join(lines[2:]).replace("(benchmarks.png)", "(docs/benchmarks.png)")
    readme = readme[:readme.index(start) + len(start)] + "\n" + table + "\n" + readme[readme.index(end):]
    open(readme_path, "w").write(readme)
print("\n".join(lines[4:4 + 2 + len(candidates) * len(cases)]))
print("wrote docs/benchmarks.md" + (" and docs/benchmarks.png" if gnuplot else ""))
