#!/usr/bin/env python3
"""The shared rate-limit row of `make bench` (issue 31): scripts/bench.py calls `measure` and `lines`.

Alone, without the rest of the bench: `scripts/bench_shared.py` (with the release build in place;
it builds the Go tools and starts the sink as bench.py does, prints the row and leaves the docs
alone). bench.py runs it after the inspection rows unless BENCH_SHARED=0.

The 4 KiB case's uploads (the Go generator, mode rules, 64 keep-alive connections, seed 10000,
BENCH_SMALL_SECONDS each) through two routes of one FormGate (release build, one worker per
core), identical but for `shared: true`: the rules route (bench.RULES) behind
`rate_limit: LIMIT` (a limit no request reaches, so that nothing is refused and both of the
shared route's Redis scripts run: the decision before the request is forwarded and, because of
`concurrent`, the lease's end after it), decided by this process alone on one route and in Redis
on the other. The Redis is Debian's redis-server, started here on a free loopback port with
persistence off (`--save "" --appendonly no`) and stopped by its PID; FormGate names it in
`redis: { url, timeout: BENCH_REDIS_TIMEOUT, on_error: deny, connections: 1 }`, so a decision
Redis did not make is a 503 and fails the run. The timeout only bounds a wait, it costs nothing
while replies come in time, so its default here is 1s, not the 50ms a deployment would give:
generator, sink, FormGate and Redis share the machine's cores, and on a loaded 2-core machine a
process can wait for a core longer than 50 ms (seen here with 50ms: 64 answers 503 in a
warm-up, FormGate logging "no reply in time"). All uploads come from 127.0.0.1: one client address,
the same Redis keys for every request.

BENCH_REPEATS rounds, the order of the routes reversed every other round, after a 1 s warm-up
of each; medians. Each measurement: req/s (the generator's answers 200 over its wall time),
FormGate's CPU (utime + stime from /proc) per request, the Redis commands FormGate counted
(`formgate_redis_commands_total{result="ok"}` on its admin listener) per request, redis-server's
own count of EVALSHA calls (`INFO commandstats`) per request, redis-server's CPU (/proc) per
request, and (printed per round only) FormGate's mean time from writing a command to its
reply (`formgate_redis_command_duration_seconds`, observed in whole milliseconds). Counters are
read 0.3 s after the generator's last answer (a request's second script goes out as it ends).
Every request is verified by the sink (status 200 for each, the rules applied, every file
byte); the run fails unless every Redis command FormGate sent was answered `ok`, no decision was
left to `on_error`, no request was refused by the limit, the per-process route sent no Redis
command at all, Redis counted as many EVALSHA calls as FormGate counted commands, and the
shared route sent two per request at least (less the connections' requests in flight at a
measurement's edges).
"""
import http.client, os, re, shutil, socket, statistics, subprocess, sys, tempfile, time

REDIS = "/usr/bin/redis-server"
# requests_per_second and burst up to 1,000,000, concurrent up to 1,000,000 (the config's
# ranges): far above what 64 connections on this machine send.
LIMIT = "requests_per_second: 1000000, burst: 1000000, concurrent: 100000"
TIMEOUT = os.environ.get("BENCH_REDIS_TIMEOUT", "1s")
ROUTES = ("local", "shared")
LABELS = {"local": "per-process limits", "shared": "`shared: true` (Redis)"}


# --- redis-server
class Redis:
    """Debian's redis-server on a free loopback port, no persistence, in a temp directory."""

    def __init__(self, bench):
        self.bench = bench
        self.port = bench.free_port()
        self.directory = tempfile.mkdtemp(prefix="formgate-bench-redis-")
        self.process = bench.spawn([REDIS, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                                    "--appendonly", "no", "--dir", self.directory, "--daemonize", "no",
                                    "--logfile", os.path.join(bench.work, "redis.log")], "redis.log")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            try:
                if self.command("PING") == "PONG":
                    return
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise bench.BenchFailure(f"redis-server did not answer PING (exit {self.process.poll()}; see "
                                 f"{bench.work}/redis.log)")

    def command(self, *arguments):
        """One command on a new connection (RESP2): its reply (str, int, list; an error raises)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as connection:
            request = f"*{len(arguments)}\r\n".encode()
            for argument in arguments:
                data = str(argument).encode()
                request += b"$%d\r\n%s\r\n" % (len(data), data)
            connection.sendall(request)
            return reply(connection.makefile("rb"))

    def commandstats(self):
        """INFO commandstats: {command: calls}."""
        text = self.command("INFO", "commandstats")
        return {match.group(1): int(match.group(2)) for match in re.finditer(r"^cmdstat_(\S+?):calls=(\d+)", text, re.M)}

    def cpu(self):
        return self.bench.cpu_seconds(self.process.pid)

    def stop(self):
        """Stops redis-server by its PID (SIGTERM, then SIGKILL) and removes its directory."""
        self.bench.stop(self.process)
        shutil.rmtree(self.directory, ignore_errors=True)


def reply(stream):
    line = stream.readline()
    if not line.endswith(b"\r\n"):
        raise OSError("redis-server closed the connection")
    kind, rest = line[:1], line[1:-2].decode()
    if kind == b"+":
        return rest
    if kind == b"-":
        raise OSError(f"redis-server answered {rest}")
    if kind == b":":
        return int(rest)
    if kind == b"$":
        return None if int(rest) < 0 else stream.read(int(rest) + 2)[:-2].decode()
    if kind == b"*":
        return None if int(rest) < 0 else [reply(stream) for _ in range(int(rest))]
    raise OSError(f"redis-server answered {line!r}")


# --- FormGate
def config(bench, port, sink_port, admin_port, redis_port):
    """One FormGate, two routes identical but for `shared: true`."""
    routes = "".join(f"  - name: {name}\n    match: {{ path: /{name} }}\n"
                     f"    rate_limit: {{ {LIMIT}{', shared: true' if name == 'shared' else ''} }}\n" + bench.RULES
                     for name in ROUTES)
    return (f"listen: 127.0.0.1:{port}\nworkers: {bench.cores}\nupstream: http://127.0.0.1:{sink_port}\n"
            f"admin: 127.0.0.1:{admin_port}\naccess_log: off\nlimits: {{ body_bytes: 64GiB, file_bytes: 64GiB }}\n"
            f"redis: {{ url: redis://127.0.0.1:{redis_port}/0, timeout: {TIMEOUT}, on_error: deny, connections: 1, "
            "key_prefix: formgate-bench }\n"
            "routes:\n" + routes)


def metrics(admin_port):
    """The series this row reads from /metrics: {name with labels: value}."""
    connection = http.client.HTTPConnection("127.0.0.1", admin_port, timeout=30)
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    connection.close()
    found = {}
    for match in re.finditer(r"^(formgate_redis_[a-z_]+(?:\{[^}]*\})?|formgate_rate_limited_total\{[^}]*\}) (\S+)$",
                             text, re.M):
        found[match.group(1)] = float(match.group(2))
    return found


def counters(proxy_admin, redis):
    return dict(metrics=metrics(proxy_admin), stats=redis.commandstats())


def difference(before, after):
    keys = set(before) | set(after)
    return {key: after.get(key, 0) - before.get(key, 0) for key in keys}


def once(bench, route, port, admin, redis, sink_port, process, case, label):
    """One measurement of one route; the figures, verified."""
    before, counted0 = bench.sink_stats(sink_port), counters(admin, redis)
    cpu0, redis0 = bench.cpu_seconds(process.pid), redis.cpu()
    out = bench.load(port, "rules", **case, path=f"/{route}")
    cpu1, redis1 = bench.cpu_seconds(process.pid), redis.cpu()
    time.sleep(0.3)  # the requests' second script (the lease's end) goes out as each request ends
    counted1 = counters(admin, redis)
    delta = bench.verify(f"shared {label}", out, before, bench.sink_stats(sink_port))
    series = difference(counted0["metrics"], counted1["metrics"])
    calls = difference(counted0["stats"], counted1["stats"])
    ok = series.get('formgate_redis_commands_total{result="ok"}', 0)
    problems = []
    failed = {key: value for key, value in series.items()
              if value and (key.startswith(("formgate_redis_errors_total", "formgate_rate_limited_total"))
                            or key.startswith("formgate_redis_commands_total") and 'result="ok"' not in key)}
    if failed:
        problems.append(f"/metrics counted {failed}")
    evalsha = calls.get("evalsha", 0)
    if route == "local" and (ok or evalsha):
        problems.append(f"the per-process route sent Redis commands: FormGate counted {ok:.0f}, Redis {calls}")
    if route == "shared" and (evalsha != ok or evalsha < 2 * out["ok"] - case["conns"]):
        problems.append(f"Redis counted {evalsha} EVALSHA calls (all: {calls}), FormGate {ok:.0f} commands, "
                        f"for {out['ok']} requests")
    if problems:
        raise bench.BenchFailure(f"VERIFICATION FAILED for shared {label}:\n  " + "\n  ".join(problems))
    requests = out["ok"]
    duration_count = series.get("formgate_redis_command_duration_seconds_count", 0)
    return dict(value=requests / out["seconds"], p50=out["p50_ms"], p99=out["p99_ms"],
                proxy=(cpu1 - cpu0) / requests * 1e6, redis=(redis1 - redis0) / requests * 1e6,
                commands=ok / requests, evalsha=evalsha / requests,
                latency=series.get("formgate_redis_command_duration_seconds_sum", 0) / duration_count * 1e3
                if duration_count else 0.0,
                requests=requests, verified=delta["verified"], bytes=delta["file_bytes"])


def measure(bench, sink_port, case):
    """The row; `case` is the 4 KiB case's (conns, size, seed, duration). The sink's verified
    requests are returned too, for the run's total."""
    redis = Redis(bench)
    process = None
    try:
        port, admin = bench.free_port(), bench.free_port()
        path = os.path.join(bench.work, "shared.yaml")
        open(path, "w").write(config(bench, port, sink_port, admin, redis.port))
        process = bench.spawn([bench.binary, "run", "-c", path], "shared.log")
        bench.wait_for(port, process)
        bench.wait_for(admin, process)
        samples = {route: [] for route in ROUTES}
        verified = [0, 0]
        for route in ROUTES:  # warm-up: connections to the sink and to Redis, the script loaded
            sample = once(bench, route, port, admin, redis, sink_port, process, dict(case, duration="1s"),
                          f"{route} (warm-up)")
            verified[0] += sample["verified"]
            verified[1] += sample["bytes"]
        for round_index in range(bench.repeats):
            order = ROUTES if round_index % 2 == 0 else tuple(reversed(ROUTES))
            for route in order:
                sample = once(bench, route, port, admin, redis, sink_port, process, case, route)
                verified[0] += sample["verified"]
                verified[1] += sample["bytes"]
                samples[route].append(sample)
                print(f"bench: shared round {round_index + 1} {route:6} {sample['value']:,.0f} req/s p50 "
                      f"{sample['p50']:.2f} ms p99 {sample['p99']:.2f} ms, proxy CPU {sample['proxy']:.1f} µs/req, "
                      f"Redis commands {sample['commands']:.3f}/req (EVALSHA {sample['evalsha']:.3f}/req by Redis), "
                      f"Redis CPU {sample['redis']:.1f} µs/req, mean reply {sample['latency']:.3f} ms (FormGate's "
                      "histogram, whole milliseconds)",
                      flush=True)
        keys = redis.command("KEYS", "*")
        print(f"bench: shared: Redis keys at the end: {sorted(keys)}", flush=True)
    finally:
        if process:
            bench.stop(process)
        redis.stop()
    result = {route: medians(values) for route, values in samples.items()}
    version = subprocess.run([REDIS, "--version"], capture_output=True, text=True).stdout
    match = re.search(r"v=(\S+)", version)
    result.update(verified=verified, seconds=case["duration"], conns=case["conns"], size=case["size"],
                  repeats=bench.repeats,
                  redis_version=match.group(1) if match else "unknown",
                  samples={route: [sample["value"] for sample in values] for route, values in samples.items()})
    return result


def medians(samples):
    return {key: statistics.median(sample[key] for sample in samples) for key in samples[0]
            if isinstance(samples[0][key], (int, float))}


def lines(result):
    """The docs' and README's lines for the row."""
    if not result:
        return []
    local, shared = result["local"], result["shared"]
    seconds = str(result["seconds"]).rstrip("s")
    text = [f"**Shared rate limits** (`scripts/bench_shared.py`; 4 KiB uploads on {result['conns']} connections, "
            f"one FormGate, two routes identical but for `shared: true`; medians of {result['repeats']} rounds, routes "
            "alternating):",
            "",
            "| route | req/s | × per-process | p50 ms | p99 ms | proxy CPU µs/req | Redis commands/req | "
            "EVALSHA/req (Redis's count) | Redis CPU µs/req |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for route, figures in (("local", local), ("shared", shared)):
        redis = route == "shared"
        text.append(f"| rules + `rate_limit`, {LABELS[route]} | {figures['value']:,.0f} | "
                    f"{figures['value'] / local['value']:.2f}× | {figures['p50']:.2f} | {figures['p99']:.2f} | "
                    f"{figures['proxy']:.1f} | {figures['commands']:.3f} | {figures['evalsha']:.3f} | "
                    + (f"{figures['redis']:.1f} |" if redis else "— |"))
    alone = result.get("alone")
    provenance = (f"Measured alone (`{alone['command']}`) on {alone['date']}, commit `{alone['commit']}`, "
                  f"{alone['formgate']} (release build), {alone['cores']} cores, load average (1 min) "
                  f"{alone['load_before']} before, {alone['load_after']} after; " if alone else "")
    text += ["", provenance + f"`rate_limit: {{ {LIMIT} }}` on the rules route (a limit no request reaches: "
             "nothing refused, and both of the shared route's scripts run, the decision before forwarding and "
             "the lease's end after it), the same with `shared: true` against Debian's redis-server "
             f"{result['redis_version']} started by the bench on loopback (persistence off; `redis: {{ timeout: {TIMEOUT}, "
             "on_error: deny, connections: 1 }`, one connection per worker; a timeout costs nothing while "
             f"replies come in time, and none came late). {seconds} s per measurement "
             "after a 1 s warm-up of each route, all uploads from one client address (the same Redis keys for "
             f"every request). Every request verified by the sink ({result['verified'][0]:,} in this "
             "row); every Redis command FormGate counted answered `ok`, none left to `on_error`, none refused, "
             "no Redis command from the per-process route, and Redis's EVALSHA count equal to FormGate's command "
             f"count. Shared: {shared['proxy'] - local['proxy']:+.1f} µs of proxy CPU per request "
             f"({(shared['proxy'] / local['proxy'] - 1) * 100:+.0f} %), {shared['commands']:.3f} Redis commands "
             "per request (one EVALSHA to decide, one to end the request's lease"
             + ("; lease renewals of requests in flight add the rest" if shared["commands"] >= 2.0005 else "")
             + f"), {shared['redis']:.1f} µs of redis-server CPU per request; generator, proxy, "
             "sink and Redis share the cores.", ""]
    return text


def main():
    """The shared row alone: the Go tools and the sink as bench.py builds and starts them."""
    sys.argv[1:] = []
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench
    os.makedirs(bench.work, exist_ok=True)
    if not os.path.exists(bench.binary):
        sys.exit(f"bench_shared: no FormGate binary at {bench.binary} (make release)")
    if not os.path.exists(REDIS):
        sys.exit(f"bench_shared: no {REDIS} (Debian's redis-server; make bench installs it)")
    try:
        bench.build_tools()
        sink, sink_port = bench.spawn_go([os.path.join(bench.tools, "sink")], "sink.log")
        facts = bench.facts()
        load_before = bench.loadavg()
        result = measure(bench, sink_port, bench.case_table()["small"][1])
        settings = " ".join(f"{name}={value}" for name, value in sorted(os.environ.items()) if name.startswith("BENCH_"))
        result["alone"] = dict(command=(settings + " " if settings else "") + "scripts/bench_shared.py", date=time.strftime("%Y-%m-%d"),
                               commit=facts["commit"], formgate=facts["formgate"], cores=bench.cores,
                               load_before=load_before, load_after=bench.loadavg())
        print("\n" + "\n".join(lines(result)))
        print("bench_shared: the shared rate-limit row alone: docs left alone.")
    except bench.BenchFailure as failure:
        print(f"\nbench_shared: FAILED\n{failure}", file=sys.stderr)
        sys.exit(1)
    finally:
        for each in bench.processes:
            bench.stop(each)


if __name__ == "__main__":
    main()
