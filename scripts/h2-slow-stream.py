#!/usr/bin/env python3
"""Does one slow upstream slow the other streams of an HTTP/2 connection? (issue 16, acceptance 2)

Runs 100 concurrent 8 MiB multipart uploads on one h2c connection through the release binary
(`Tests/ProxyIntegrationTests/Resources/h2_many.py`), twice, each on a fresh proxy, demo
upstream and slow upstream:
  baseline  all 100 streams to /upload (the demo upstream);
  slow      stream 0 to /slow (`slow_upstream.py`, reading at 1 MiB/s), the other 99 to /upload.
Both routes rename `upload` to `file` and inject a field, as the integration test's do. The
figures compare streams 1-99 (the same streams in both runs): the median, p90 and max of their
completion times (seconds from the first HEADERS; all streams start at once), and the ratio
slow/baseline of each, and of the proxy's CPU time (less at the mercy of other load on the
machine than wall-clock times are). With `--repeat N` the pairs alternate and the medians of
the N ratios close the output. Also printed: the slow stream's own time, the proxy's peak RSS (VmHWM),
its CPU time (one worker: when it is near the run's time, the proxy is what limits the others'
pace) and whether every receipt was byte-exact (size and sha256 at the upstream).

    swift build -c release --product formgate ...   (the Makefile's `make release`)
    scripts/h2-slow-stream.py [--repeat 3] [--streams 100] [--size 8388608] [--slow-rate 1048576]
                              [--deadline 300] [--binary PATH]

The last line is a JSON object with every figure. Exits 1 if a receipt was not byte-exact.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
resources = os.path.join(root, "Tests/ProxyIntegrationTests/Resources")


def start(command):
    """Starts a server and returns (process, port) once it prints `listening on HOST:PORT`."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    line = b""
    while b"listening on " not in line:
        line = process.stderr.readline()
        if time.time() > deadline or (not line and process.poll() is not None):
            sys.exit(f"{command[:2]} did not start")
    address = line.split(b"listening on ")[1].split()[0].decode().rstrip(",")
    threading.Thread(target=process.stderr.read, daemon=True).start()
    return process, int(address.rsplit(":", 1)[1])


def peak_rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return -1


def cpu_seconds(pid):
    """User plus system CPU time of a process so far."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_run(arguments, slow):
    """One upload of every stream on a fresh proxy; returns the client's answer and the proxy's peak RSS."""
    demo, demo_port = start([arguments.binary, "demo-upstream", "--listen", "127.0.0.1:0"])
    slow_upstream, slow_port = start(
        [sys.executable, os.path.join(resources, "slow_upstream.py"), "--rate", str(arguments.slow_rate)])
    rules = "    multipart:\n      rename_fields: { upload: file }\n      inject: [{ name: via, value: h2 }]\n"
    config = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    config.write(
        "listen:\n  - { address: 127.0.0.1:0, http2: { h2c: true, stream_window: 1MiB, connection_window: 16MiB } }\n"
        f"workers: 1\naccess_log: off\nupstream: http://127.0.0.1:{demo_port}\nroutes:\n"
        f"  - match: {{ path: /upload }}\n{rules}"
        f"  - match: {{ path: /slow }}\n    upstream: \"http://127.0.0.1:{slow_port}\"\n{rules}")
    config.close()
    proxy, proxy_port = start([arguments.binary, "run", "-c", config.name])
    try:
        client = subprocess.run(
            [sys.executable, os.path.join(resources, "h2_many.py"), "127.0.0.1", str(proxy_port),
             "--streams", str(arguments.streams), "--size", str(arguments.size), "--slow", "1" if slow else "0",
             "--deadline", str(arguments.deadline)],
            stdout=subprocess.PIPE, check=False)
        answer = json.loads(client.stdout)
        return answer, peak_rss_kib(proxy.pid), cpu_seconds(proxy.pid)
    finally:
        for process in (proxy, slow_upstream, demo):
            process.terminate()
            process.wait()
        os.unlink(config.name)


def byte_exact(stream, size):
    receipt = stream["receipt"] if isinstance(stream["receipt"], dict) else {}
    files = receipt.get("files", [])
    return (stream["status"] == 200 and len(files) == 1 and files[0]["size"] == size
            and files[0]["sha256"] == stream["sha256"])


def figures(answer, size):
    others = sorted(stream["end"] for stream in answer["streams"][1:] if stream["end"] is not None)
    p90 = others[max(0, int(round(0.9 * len(others))) - 1)] if others else None
    return {
        "median": statistics.median(others) if others else None, "p90": p90, "max": others[-1] if others else None,
        "finished": len(others), "stream0": answer["streams"][0]["end"],
        "byte_exact": sum(byte_exact(stream, size) for stream in answer["streams"]),
        "error": answer["error"],
    }


def seconds(value):
    return "-" if value is None else f"{value:.2f}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--size", type=int, default=8 << 20)
    parser.add_argument("--slow-rate", type=int, default=1 << 20, help="the slow upstream's bytes per second")
    parser.add_argument("--deadline", type=float, default=300, help="seconds a run may take")
    parser.add_argument("--binary", default=os.path.join(root, ".build/release/formgate"))
    arguments = parser.parse_args()
    results = []
    for repetition in range(1, arguments.repeat + 1):
        run = {}
        for mode in ("baseline", "slow"):
            answer, peak, cpu = one_run(arguments, mode == "slow")
            run[mode] = dict(figures(answer, arguments.size), peak_rss_kib=peak, proxy_cpu_s=cpu)
        run["ratio"] = {
            key: run["slow"][key] / run["baseline"][key] if run["slow"][key] and run["baseline"][key] else None
            for key in ("median", "p90", "max", "proxy_cpu_s")}
        results.append(run)
        print(f"run {repetition}: streams 1-{arguments.streams - 1}, {arguments.size >> 20} MiB each, completion s"
              f" (stream 0's upstream at {arguments.slow_rate} B/s in the slow run)")
        for mode in ("baseline", "slow"):
            figure = run[mode]
            print(f"  {mode:8}  median {seconds(figure['median'])}  p90 {seconds(figure['p90'])}"
                  f"  max {seconds(figure['max'])}  finished {figure['finished']}"
                  f"  stream 0 {seconds(figure['stream0'])}  byte-exact {figure['byte_exact']}/{arguments.streams}"
                  f"  peak RSS {figure['peak_rss_kib'] / 1024:.1f} MiB  proxy CPU {figure['proxy_cpu_s']:.2f} s"
                  f"  error {figure['error']}")
        ratio = run["ratio"]
        print("  ratio     " + "  ".join(
            f"{key} {'-' if ratio[key] is None else format(ratio[key], '.3f')}"
            for key in ("median", "p90", "max", "proxy_cpu_s")))
        sys.stdout.flush()
    if len(results) > 1:
        print("median over the runs: " + "  ".join(
            f"{key} ratio {statistics.median(run['ratio'][key] for run in results if run['ratio'][key]):.3f}"
            for key in ("median", "p90", "max", "proxy_cpu_s")
            if any(run["ratio"][key] for run in results)))
    print(json.dumps(results))
    exact = all(run[mode]["byte_exact"] == arguments.streams for run in results for mode in ("baseline", "slow"))
    sys.exit(0 if exact else 1)


if __name__ == "__main__":
    main()
