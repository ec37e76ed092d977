#!/usr/bin/env python3
"""Side-by-side proxy benchmark (`make bench`): one run, candidates alternating, every request verified.

The load generator and the sink are Go programs that share no code with FormGate
(scripts/bench/, standard library only, built here into .build/bench/). The sink checks every
request it receives against what the generator sent (see scripts/bench/sink/main.go) and
the run FAILS on any mismatch, on any request the sink did not verify and on any status
but 200.

Candidates, each in front of the same sink:
  direct        the generator talks to the sink
  nginx         nginx as its best users run it for uploads (the config is printed in the docs)
  haproxy       HAProxy (Debian's 2.6), `mode http`, request buffering off, `http-reuse always`
                to the sink, one thread per core, no logging, in the foreground as one process
                (haproxy.cfg is printed in the docs)
  caddy         Caddy (Debian's 2.6), `reverse_proxy` with `flush_interval -1`, request
                buffering off (2.6's default), upstream keep-alive, admin and logs off (the
                Caddyfile is printed in the docs)
  gorewriter    Go: mime/multipart reader + writer under a new boundary, httputil.ReverseProxy
  passthrough   FormGate, a route without multipart rules (bytes forwarded as they are)
  reencode      FormGate, `multipart: {}` (parse and re-encode under a new boundary)
  rules         FormGate, sniff + rename + filename + inject
  digests       FormGate, the rules plus a sha256 digest field per file
  jwt           FormGate, the rules behind `auth: { jwt }` (HS256; every request carries a bearer
                token): the 4 KiB case only, for the price of authentication per request

HTTP/2 candidates (the h2 cases only; the generator is h2load from Debian's nghttp2-client,
posting a body file scripts/bench/h2body wrote from the same payload, so the sink verifies
every request as above; the TLS certificate is a self-signed P-256 one made here with openssl,
the same for nginx, Caddy and FormGate):
  nginx-h2         nginx `listen ... ssl http2`, tuned for uploads as its users publish it
  nginx-h2c        the same nginx, `listen ... http2` without TLS (h2c to HTTP/1.1 upstream)
  caddy-h2         Caddy's h1 config on a TLS site (`protocols h1 h2`), the same certificate
  h2-passthrough   FormGate, h2 over TLS (ALPN), the pass-through route
  h2-rules         FormGate, h2 over TLS (ALPN), the rules route
  h2c-passthrough  FormGate, prior-knowledge h2c, the pass-through route
FormGate's h2 candidates are skipped, with the reason printed, while the binary does not answer
h2 (probed with curl --http2 over ALPN and --http2-prior-knowledge): not a failure of the run.
There is no direct h2 candidate: the sink speaks HTTP/1.1 only (Go 1.19's net/http serves h2c
only with x/net, which is not here), so the h2 ratios are to nginx and Caddy h2 over TLS.

nginx, HAProxy and Caddy are the plain proxies (PEERS): every ratio is printed to each, and the
headline table is against the best of them in each case (the highest median, named in the
table's first row); "Throughput × nginx" follows it, as before (scripts/bench_baseline.py
compares both with the baseline block).

Cases: one 1 GiB upload; 8 concurrent 128 MiB uploads; 4 KiB uploads on 64 keep-alive
connections; and over HTTP/2: one 1 GiB upload, 8 concurrent 128 MiB uploads (one connection
each), 4 KiB uploads on 64 connections × 10 concurrent streams (BENCH_H2_SMALL_REQUESTS of them,
120,000: h2load's timed mode would cut the streams in flight at its end). Each case runs
BENCH_REPEATS times per candidate (the order reversed every other round); medians are
reported with the ratios to nginx, HAProxy, Caddy (nginx and Caddy h2 over TLS in the h2 cases)
and direct, CPU seconds per GiB or microseconds per request of the proxy, the sink and the
generator (utime + stime from /proc, before and after), and the proxy's peak RSS (VmHWM).

Then the profile phase (also alone: `bench.py --profile`, which leaves the docs alone): the 4 KiB
case once more for nginx, HAProxy and each FormGate candidate, a fresh process each, under
scripts/profile/alloccount.c (an LD_PRELOAD allocation counter built here with cc): allocations
per request, syscalls per request by kind (`strace -c -f`), the top symbols (`perf record -g`,
when perf can sample). BENCH_PROFILE_SECONDS (4) is the length of each of its windows.

A full run rewrites docs/benchmarks.md, docs/benchmarks.png (gnuplot) and the block between
the bench markers in README.md: every figure there comes from this script. Environment:
BENCH_REPEATS (3), BENCH_LARGE_MIB (1024), BENCH_SMALL_SECONDS (8), BENCH_CANDIDATES (all),
BENCH_CASES ("1x 8x small h2-1x h2-8x h2-small"), BENCH_H2_SMALL_REQUESTS (120000),
BENCH_H2LOAD_THREADS (1), BENCH_INSTRUCTION_REQUESTS (3200: the requests counted per candidate by
scripts/profile/instructions.sh at the end of the profile phase), BENCH_RSS_GIB (1: each of 8 uploads of the memory check; 0
skips it), BENCH_CROWD (1000: concurrent 2 MiB uploads of the second memory check; 0 skips it), BENCH_TUS (1: the
resumable row, scripts/bench_tus.py, after the cases; 0 skips it), BENCH_TUS_CHUNK_MIB (8: its PATCH size),
BENCH_INSPECTION (1: the inspection rows, scripts/bench_inspection.py, after the resumable row: 1 GiB through
the rules route with clamd `scan` beside the route without it and clamd alone, and a 64 MiB JPEG through the
rules route with `strip_metadata` beside the rules route; 0 skips them; `scripts/bench_inspection.py` runs
them alone), BENCH_STRIP_MIB (64) and BENCH_STRIP_UPLOADS (16: the JPEG's size and its uploads per measurement),
BENCH_SHARED (1: the shared rate-limit row, scripts/bench_shared.py, after the inspection rows: the 4 KiB case
through the rules route with `rate_limit` per process beside the same limit with `shared: true` against a
redis-server the script starts; req/s, proxy CPU, Redis commands and Redis CPU per request; 0 skips it;
`scripts/bench_shared.py` runs it alone), BENCH_REDIS_TIMEOUT (1s: its `redis: { timeout }`), BENCH_LIVE (1: the
live view and tracing rows, scripts/bench_live.py, after the shared rate-limit row: the 4 KiB case through the rules
route without and with a reader of `/uploads/events`, `GET /uploads` timed under 1,000 uploads in flight, and the
4 KiB case with `tracing:` off and against an OTLP receiver answering at once, one down and one slow; 0 skips them;
`scripts/bench_live.py` runs them alone), BENCH_LIVE_UPLOADS (1000: the uploads held in flight), BENCH_BINARY (the formgate binary, copied into the run directory at the start),
BENCH_CORRUPT (N: the generator flips one file byte in every Nth upload after hashing; the
run must then fail), BENCH_BASELINE (a file holding an earlier README bench block to compare
with, so several runs compare with the same one; default: README.md's block before this run
rewrites it; scripts/bench_baseline.py, "Against the baseline"). A run with a subset of
the cases or candidates, or with BENCH_CORRUPT, prints its tables and leaves the docs alone.
"""
import json, os, re, shutil, signal, socket, statistics, struct, subprocess, sys, time

import bench_inspection, bench_live, bench_shared, bench_tus

# The generator's multipart boundary (scripts/bench/payload: Boundary), for h2load's content type.
BOUNDARY = "BenchBoundary-7MA4YWxkTrZu0gW-kq9"

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
binary = os.environ.get("BENCH_BINARY", os.path.join(root, ".build/release/formgate"))
tools = os.path.join(root, ".build/bench")
work = os.path.join(tools, "run")
repeats = int(os.environ.get("BENCH_REPEATS", "3"))
large_mib = int(os.environ.get("BENCH_LARGE_MIB", "1024"))
small_seconds = int(os.environ.get("BENCH_SMALL_SECONDS", "8"))
rss_gib = int(os.environ.get("BENCH_RSS_GIB", "1"))
crowd_uploads = int(os.environ.get("BENCH_CROWD", "1000"))
corrupt = int(os.environ.get("BENCH_CORRUPT", "0"))
profile_seconds = int(os.environ.get("BENCH_PROFILE_SECONDS", "4"))
h2_small_requests = int(os.environ.get("BENCH_H2_SMALL_REQUESTS", "120000"))
h2load_threads = int(os.environ.get("BENCH_H2LOAD_THREADS", "1"))
instruction_requests = int(os.environ.get("BENCH_INSTRUCTION_REQUESTS", "3200"))
profile_only = sys.argv[1:] == ["--profile"]
if sys.argv[1:] and not profile_only:
    sys.exit("usage: bench.py [--profile]")
cores = os.cpu_count() or 1
H2_CANDIDATES = ["nginx-h2", "nginx-h2c", "caddy-h2", "h2-passthrough", "h2-rules", "h2c-passthrough"]
ALL_CANDIDATES = ("direct nginx haproxy caddy gorewriter passthrough reencode rules digests jwt".split() +
                  H2_CANDIDATES)
# FormGate's h2 candidates and their routes; the h2 candidates that speak TLS (ALPN h2), the
# others prior-knowledge h2c.
FORMGATE_H2 = {"h2-passthrough": "passthrough", "h2-rules": "rules", "h2c-passthrough": "passthrough"}
H2_TLS = {"nginx-h2", "caddy-h2", "h2-passthrough", "h2-rules"}
# Candidates measured in the 4 KiB case only.
SMALL_ONLY = {"jwt"}
ALL_CASES = ["1x", "8x", "small", "h2-1x", "h2-8x", "h2-small"]
SMALL_CASES = {"small", "h2-small"}
H2_CASES = {"h2-1x", "h2-8x", "h2-small"}
# The plain proxies, by protocol (h2: over TLS): each is a reference of the case tables, and
# the fastest of them in a case is the headline's.
PEERS = {False: ("nginx", "haproxy", "caddy"), True: ("nginx-h2", "caddy-h2")}
# The candidates each case's ratios are to: the plain proxies over the same protocol, and direct
# (HTTP/1.1 only).
REFERENCES = {False: PEERS[False] + ("direct",), True: PEERS[True]}
# The headline's reference: the best plain proxy of each case.
BEST = "best"
candidates = os.environ.get("BENCH_CANDIDATES", " ".join(ALL_CANDIDATES)).split()
wanted = os.environ.get("BENCH_CASES", " ".join(ALL_CASES)).split()
unknown = set(candidates) - set(ALL_CANDIDATES)
if unknown:
    sys.exit(f"bench: unknown candidates {' '.join(sorted(unknown))} (known: {' '.join(ALL_CANDIDATES)})")
partial = set(candidates) != set(ALL_CANDIDATES) or set(wanted) != set(ALL_CASES) or corrupt > 0
LABELS = {"direct": "direct", "nginx": "nginx", "haproxy": "HAProxy", "caddy": "Caddy",
          "gorewriter": "Go rewriter", "passthrough": "FormGate pass-through", "reencode": "FormGate re-encode",
          "rules": "FormGate rules", "digests": "FormGate digests", "jwt": "FormGate rules + JWT",
          "nginx-h2": "nginx h2 (TLS)", "nginx-h2c": "nginx h2c", "caddy-h2": "Caddy h2 (TLS)",
          "h2-passthrough": "FormGate h2 pass-through",
          "h2-rules": "FormGate h2 rules", "h2c-passthrough": "FormGate h2c pass-through"}
MODES = {"direct": "raw", "nginx": "raw", "haproxy": "raw", "caddy": "raw", "passthrough": "raw",
         "gorewriter": "reencode", "reencode": "reencode", "rules": "rules", "digests": "digests", "jwt": "rules",
         "nginx-h2": "raw", "nginx-h2c": "raw", "caddy-h2": "raw", "h2-passthrough": "raw", "h2-rules": "rules",
         "h2c-passthrough": "raw"}
processes = []


class BenchFailure(Exception):
    pass


def applies(candidate, key):
    """Whether a candidate runs in a case: HTTP/2 candidates in the h2 cases only, and the
    4 KiB-only ones in the 4 KiB case."""
    return (candidate in H2_CANDIDATES) == (key in H2_CASES) and (key in SMALL_CASES or candidate not in SMALL_ONLY)


def run(command, **kwargs):
    return subprocess.run(command, check=True, capture_output=True, text=True, **kwargs).stdout.strip()


def build_tools():
    """The generator, the sink and the rewriter, from scripts/bench/ with Go's standard library only."""
    env = dict(os.environ, GOFLAGS="-mod=mod", GOPROXY="off", GO111MODULE="on",
               GOCACHE=os.path.join(tools, "gocache"), GOPATH=os.path.join(tools, "gopath"))
    source = os.path.join(root, "scripts/bench")
    subprocess.run(["go", "test", "-count=1", "./..."], cwd=source, env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["go", "build", "-o", tools + "/", "./load", "./sink", "./rewriter", "./h2body"], cwd=source, env=env,
                   check=True)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(port, process):
    for _ in range(400):
        if process.poll() is not None:
            raise BenchFailure(f"{process.args[0]} exited with {process.returncode} before listening on {port}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise BenchFailure(f"nothing listens on {port}")


def spawn(command, log_name, **kwargs):
    log = open(os.path.join(work, log_name), "ab")
    process = subprocess.Popen(command, stdout=kwargs.pop("stdout", subprocess.DEVNULL), stderr=log, **kwargs)
    processes.append(process)
    return process


def spawn_go(command, log_name):
    """A Go tool that prints its listening address on its first line."""
    process = spawn(command, log_name, stdout=subprocess.PIPE, text=True)
    address = process.stdout.readline().strip()
    if not address:
        raise BenchFailure(f"{command[0]} did not start (see {work}/{log_name})")
    return process, int(address.rsplit(":", 1)[1])


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def tree(pid):
    """The process and its children (nginx's workers). The threads of FormGate, HAProxy (one
    process, `nbthread` threads) and Caddy count in their process's own stat and status."""
    try:
        children = open(f"/proc/{pid}/task/{pid}/children").read().split()
    except OSError:
        children = []
    return [pid] + [int(child) for child in children]


def cpu_seconds(pid):
    total = 0
    for each in tree(pid):
        try:
            fields = open(f"/proc/{each}/stat").read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid):
    total = 0
    for each in tree(pid):
        try:
            total += int(re.search(r"VmHWM:\s+(\d+)", open(f"/proc/{each}/status").read()).group(1))
        except (OSError, AttributeError):
            pass
    return total / 1024


# --- the candidates
RULES = """    multipart:
      rename_fields: { upload: file }
      sniff: { bytes: 4096, content_type: override }
      filename: "{field}-{uuid}{ext}"
      inject: [{ name: via, value: formgate }]
"""
# The JWT case: HS256 with the secret from the environment, as operators configure it.
JWT_SECRET = "bench-secret-of-32-bytes-at-least!"
JWT_AUTH = "    auth: { jwt: { secret: \"${BENCH_JWT_SECRET}\", issuer: bench, audience: uploads } }\n"
ROUTES = {"passthrough": "", "reencode": "    multipart: {}\n", "rules": RULES,
          "digests": RULES + "      digest: { algorithms: [sha256] }\n", "jwt": JWT_AUTH + RULES}


def bearer_token():
    """An HS256 token made here with the standard library (no FormGate code), valid for a day."""
    import base64, hashlib, hmac
    encode = lambda data: base64.urlsafe_b64encode(data).rstrip(b"=")
    header = encode(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    claims = {"sub": "bench-user", "iss": "bench", "aud": "uploads", "exp": int(time.time()) + 86400}
    payload = encode(json.dumps(claims, separators=(",", ":")).encode())
    signature = encode(hmac.new(JWT_SECRET.encode(), header + b"." + payload, hashlib.sha256).digest())
    return (header + b"." + payload + b"." + signature).decode()


def formgate_config(kind, port, sink_port):
    return (f"listen: 127.0.0.1:{port}\nworkers: {cores}\nupstream: http://127.0.0.1:{sink_port}\n"
            "access_log: off\nlimits: { body_bytes: 64GiB, file_bytes: 64GiB }\n"
            f"routes:\n  - name: {kind}\n    match: {{ path: /upload }}\n" + ROUTES[kind])


def nginx_config(port, sink_port, temp):
    return f"""worker_processes {cores};
daemon off;
pid {temp}/nginx.pid;
error_log {temp}/error.log;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    keepalive_requests 1000000;
    client_max_body_size 0;
    client_body_buffer_size 256k;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    upstream sink {{
        server 127.0.0.1:{sink_port};
        keepalive 128;
        keepalive_requests 1000000;
    }}
    server {{
        listen 127.0.0.1:{port} reuseport;
        location / {{
            proxy_pass http://sink;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_request_buffering off;
        }}
    }}
}}
"""


def nginx_h2_config(port, sink_port, temp, tls, cert=None, key=None):
    """nginx for HTTP/2 uploads, as its users tune it: the h1 config's upstream and body
    settings, plus the windows. nginx advertises http2_body_preread_size as
    SETTINGS_INITIAL_WINDOW_SIZE and reopens a stream's window in steps of that size (seen with
    h2_hostile.py: 65,536 by default, 524,288 with 512k; the connection window it opens to
    2^31-1 at once); the 64k default throttles h2 uploads (nextcloud/server#25297, Cloudflare's
    "Delivering HTTP/2 upload speed improvements"), and Nextcloud's nginx guide sets
    client_body_buffer_size and http2_body_preread_size to 512k. 640 concurrent streams need as
    many upstream connections kept alive, or nginx closes and reopens them per request."""
    listen = f"listen 127.0.0.1:{port} ssl http2 reuseport;" if tls else f"listen 127.0.0.1:{port} http2 reuseport;"
    certificates = (f"\n        ssl_certificate {cert};\n        ssl_certificate_key {key};" if tls else "")
    return f"""worker_processes {cores};
daemon off;
pid {temp}/nginx.pid;
error_log {temp}/error.log;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    keepalive_requests 1000000;
    client_max_body_size 0;
    client_body_buffer_size 512k;
    http2_body_preread_size 512k;
    http2_max_concurrent_streams 128;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    upstream sink {{
        server 127.0.0.1:{sink_port};
        keepalive 1024;
        keepalive_requests 1000000;
    }}
    server {{
        {listen}{certificates}
        location / {{
            proxy_pass http://sink;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_request_buffering off;
        }}
    }}
}}
"""


def haproxy_config(port, sink_port):
    """HAProxy in front of an upload server, as its users run it: `mode http`, the request body
    streamed as it comes (`http-buffer-request` is off by default; said here), client and sink
    connections kept alive and idle sink connections shared between client connections
    (`http-reuse always`), one thread per core, inactivity timeouts far above anything a 1 GiB
    upload on loopback needs, `maxconn` far above the 64 connections of the 4 KiB case, no `log`
    line (nothing logged anywhere), `tune.bufsize` at its 16 KiB default (its manual: "strongly
    recommended not to change this from the default value"). Started without `daemon`, `-D`
    or `-W`: one process in the foreground, no master, so the PID stopped and measured is the
    proxy's, its threads counted in its own /proc figures. (Not `-db`, which the manual keeps
    for development and small tests.)"""
    return f"""global
    nbthread {cores}
    maxconn 4096

defaults
    mode http
    option http-keep-alive
    no option http-buffer-request
    http-reuse always
    timeout connect 5s
    timeout client 10m
    timeout server 10m
    timeout http-keep-alive 10m

frontend uploads
    bind 127.0.0.1:{port}
    default_backend sink

backend sink
    server sink 127.0.0.1:{sink_port}
"""


def caddy_config(port, sink_port, tls=False, cert=None, key=None):
    """Caddy 2.6 in front of an upload server: `reverse_proxy` with `flush_interval -1`; request
    bodies stream (2.6's `buffer_requests` is off unless named; its Caddyfile has no
    `request_buffers` yet), admin endpoint and automatic HTTPS off, no access log (none unless a
    site names `log`) and the runtime log at ERROR. Idle sink connections kept: 1,024, as
    nginx's h2 upstream keeps; Caddy's default is 32 per host, and with 64 client connections
    (640 h2 streams) it then closes and redials sink connections all the time (in the 4 KiB
    case here, 0.5 to 0.75 times the requests per second and 1.7 times the CPU per request).
    GOMAXPROCS is Go's default (every core). For h2: the same site over TLS with the run's
    certificate, `protocols h1 h2` (no h3 listener)."""
    site = f"https://:{port}" if tls else f"http://:{port}"
    certificates = f"\n\ttls {cert} {key}" if tls else ""
    return f"""{{
	admin off
	auto_https off
	log {{
		level ERROR
	}}
	servers {{
		protocols {'h1 h2' if tls else 'h1'}
	}}
}}

{site} {{
	bind 127.0.0.1{certificates}
	reverse_proxy 127.0.0.1:{sink_port} {{
		flush_interval -1
		transport http {{
			keepalive_idle_conns 1024
			keepalive_idle_conns_per_host 1024
		}}
	}}
}}
"""


def formgate_h2_config(kind, port, sink_port, tls, cert=None, key=None):
    """FormGate with one HTTP/2 listener (issue 16's `http2:` listener key): TLS with ALPN h2,
    or prior-knowledge h2c; the route as in the HTTP/1.1 cases."""
    listener = (f"{{ address: 127.0.0.1:{port}, tls: {{ certificates: [{{ cert: {cert}, key: {key} }}] }} }}" if tls
                else f"{{ address: 127.0.0.1:{port}, http2: {{ h2c: true }} }}")
    plain = formgate_config(kind, port, sink_port)
    return plain.replace(f"listen: 127.0.0.1:{port}\n", f"listen:\n  - {listener}\n", 1)


def certificate():
    """A self-signed P-256 certificate for 127.0.0.1, made once per run with openssl."""
    cert, key = os.path.join(work, "bench-cert.pem"), os.path.join(work, "bench-key.pem")
    if not os.path.exists(cert):
        run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", key, "-out", cert, "-days", "2", "-subj", "/CN=127.0.0.1", "-addext",
             "subjectAltName=IP:127.0.0.1"])
    return cert, key


def start_caddy(candidate, sink_port, port, env):
    """Caddy with its Caddyfile in the run directory (h1, or h2 over TLS with the run's
    certificate). XDG_CONFIG_HOME and XDG_DATA_HOME (its storage's default place) there too, so
    Caddy writes nothing outside the run directory: 2.6 saves the config it runs
    (autosave.json) to its config directory even with `admin off`."""
    temp = os.path.join(work, "caddy")
    os.makedirs(temp, exist_ok=True)
    tls = candidate in H2_TLS
    cert, key = certificate() if tls else (None, None)
    config = os.path.join(temp, "Caddyfile")
    open(config, "w").write(caddy_config(port, sink_port, tls, cert, key))
    env = dict(env or os.environ, XDG_CONFIG_HOME=temp, XDG_DATA_HOME=temp)
    return spawn([shutil.which("caddy") or "/usr/bin/caddy", "run", "--config", config, "--adapter", "caddyfile"],
                 "caddy.log", env=env)


def start_h2(candidate, sink_port, port, env):
    """The HTTP/2 candidates: nginx (TLS or h2c), Caddy (TLS) or FormGate with an h2 listener."""
    cert, key = certificate()
    if candidate == "caddy-h2":
        return start_caddy(candidate, sink_port, port, env)
    if candidate.startswith("nginx"):
        temp = os.path.join(work, "nginx")
        os.makedirs(temp, exist_ok=True)
        config = os.path.join(temp, "nginx.conf")
        open(config, "w").write(nginx_h2_config(port, sink_port, temp, candidate in H2_TLS, cert, key))
        return spawn([shutil.which("nginx") or "/usr/sbin/nginx", "-c", config, "-p", temp], "nginx.log", env=env)
    config = os.path.join(work, f"{candidate}.yaml")
    open(config, "w").write(formgate_h2_config(FORMGATE_H2[candidate], port, sink_port, candidate in H2_TLS, cert, key))
    return spawn([binary, "run", "-c", config], f"{candidate}.log", env=env)


def start(candidate, sink_port, env=None):
    """Starts a fresh candidate process: (process or None, port); `env` replaces the environment."""
    if candidate == "direct":
        return None, sink_port
    if candidate == "gorewriter":
        return spawn_go([os.path.join(tools, "rewriter"), "-upstream", f"http://127.0.0.1:{sink_port}"], "gorewriter.log")
    port = free_port()
    if candidate in H2_CANDIDATES:
        process = start_h2(candidate, sink_port, port, env)
    elif candidate == "nginx":
        temp = os.path.join(work, "nginx")
        os.makedirs(temp, exist_ok=True)
        config = os.path.join(temp, "nginx.conf")
        open(config, "w").write(nginx_config(port, sink_port, temp))
        process = spawn([shutil.which("nginx") or "/usr/sbin/nginx", "-c", config, "-p", temp], "nginx.log", env=env)
    elif candidate == "haproxy":
        config = os.path.join(work, "haproxy.cfg")
        open(config, "w").write(haproxy_config(port, sink_port))
        process = spawn([shutil.which("haproxy") or "/usr/sbin/haproxy", "-f", config], "haproxy.log", env=env)
    elif candidate == "caddy":
        process = start_caddy(candidate, sink_port, port, env)
    else:
        config = os.path.join(work, f"{candidate}.yaml")
        open(config, "w").write(formgate_config(candidate, port, sink_port))
        env = dict(env or os.environ, BENCH_JWT_SECRET=JWT_SECRET)
        process = spawn([binary, "run", "-c", config], f"{candidate}.log", env=env)
    wait_for(port, process)
    return process, port


def formgate_h2_unavailable(sink_port):
    """Why FormGate's h2 candidates cannot run (None when the binary answers h2 over ALPN and
    h2c): each listener is started as the bench starts it and asked once by curl."""
    if not os.path.exists(binary):
        return f"no FormGate binary at {binary}"
    for candidate in ("h2-passthrough", "h2c-passthrough"):
        tls = candidate in H2_TLS
        try:
            process, port = start(candidate, sink_port)
        except BenchFailure as failure:
            return f"it does not start with an h2 listener ({failure}; see {work}/{candidate}.log)"
        try:
            target = ["--http2", "-k", f"https://127.0.0.1:{port}/upload"] if tls else \
                ["--http2-prior-knowledge", f"http://127.0.0.1:{port}/upload"]
            done = subprocess.run(["curl", "-sS", "-o", "/dev/null", "-w", "%{http_version}", "--max-time", "10"] + target,
                                  capture_output=True, text=True)
            if done.stdout.strip() != "2":
                return (f"it does not answer {'h2 over ALPN' if tls else 'h2c'} (curl: HTTP version "
                        f"{done.stdout.strip() or 'none'}{', ' + done.stderr.strip() if done.stderr.strip() else ''})")
        finally:
            stop(process)
    return None


# --- load
def case_table():
    big = large_mib << 20
    return {"1x": (f"1 × {mib(large_mib)}", dict(conns=1, size=big, seed=1000)),
            "8x": (f"8 × {mib(large_mib // 8)}", dict(conns=8, size=big // 8, seed=2000)),
            "small": ("4 KiB × 64 connections", dict(conns=64, size=4096, seed=10000, duration=f"{small_seconds}s")),
            "h2-1x": (f"h2 1 × {mib(large_mib)}", dict(conns=1, streams=1, size=big, seed=1000, requests=1)),
            "h2-8x": (f"h2 8 × {mib(large_mib // 8)}", dict(conns=8, streams=1, size=big // 8, seed=2000, requests=8)),
            "h2-small": ("h2 4 KiB × 64 conns × 10 streams",
                         dict(conns=64, streams=10, size=4096, seed=10000, requests=h2_small_requests))}


def mib(count):
    return f"{count // 1024} GiB" if count % 1024 == 0 else f"{count} MiB"


def load(port, mode, conns, size, seed, duration="0", one_seed=False, header=None, path=None):
    command = [os.path.join(tools, "load"), "-addr", f"127.0.0.1:{port}", "-mode", mode, "-conns", str(conns),
               "-size", str(size), "-seed", str(seed), "-duration", duration, "-sha-cache", os.path.join(tools, "sha256")]
    if path:
        command += ["-path", path]
    if header:
        command += ["-header", header]
    if one_seed:
        command.append("-one-seed")
    if corrupt:
        command += ["-corrupt-every", str(corrupt)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800)
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError:
        raise BenchFailure(f"load generator failed ({result.returncode}): {result.stderr.strip()}")


def body_file(seed, size):
    """The upload body h2load posts (`-d`), written once per seed and size by scripts/bench/h2body."""
    path = os.path.join(tools, f"h2body-{seed}-{size}")
    if not os.path.exists(path):
        run([os.path.join(tools, "h2body"), "-out", path, "-seed", str(seed), "-size", str(size)])
    return path


def h2_load(port, tls, mode, conns, streams, size, seed, requests):
    """h2load posting the same verified body `requests` times over `conns` connections with up
    to `streams` concurrent streams each; the load generator's outcome in load()'s shape."""
    if corrupt:
        raise BenchFailure("BENCH_CORRUPT needs the Go generator: h2load posts one body file as it is")
    log = os.path.join(work, "h2load-requests.log")
    command = ["h2load", "-n", str(requests), "-c", str(conns), "-m", str(streams), "-t", str(min(h2load_threads, conns)),
               "-d", body_file(seed, size), "-H", f"content-type: multipart/form-data; boundary={BOUNDARY}",
               "-H", f"x-bench: {mode} {seed} {size}", "--log-file", log,
               f"{'https' if tls else 'http'}://127.0.0.1:{port}/upload"]
    output_path = os.path.join(work, "h2load.out")
    with open(output_path, "w") as output:
        child = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
    return h2load_outcome(open(output_path).read(), log, size, usage.ru_utime + usage.ru_stime, child.returncode)


def h2load_outcome(text, log, size, cpu, returncode):
    """Reads h2load's summary (requests, 2xx, wall time) and its per-request log (latencies)."""
    finished = re.search(r"finished in ([\d.]+)(ms|s),", text)
    counts = re.search(r"requests: (\d+) total, \d+ started, (\d+) done, (\d+) succeeded, (\d+) failed, "
                       r"(\d+) errored, (\d+) timeout", text)
    statuses = re.search(r"status codes: (\d+) 2xx", text)
    if not finished or not counts or not statuses:
        raise BenchFailure(f"h2load failed ({returncode}): {text.strip()[-600:]}")
    total, done, succeeded = int(counts.group(1)), int(counts.group(2)), int(counts.group(3))
    ok = int(statuses.group(1))
    latencies = sorted(int(line.split("\t")[2]) for line in open(log) if line.count("\t") == 2)
    percentile = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] / 1000 if latencies else 0.0
    errors = [] if ok == total else [line for line in text.splitlines() if line.startswith(("requests:", "status codes:"))]
    return dict(requests=done, ok=ok, failed=total - ok, errors=errors, file_bytes=ok * size,
                seconds=float(finished.group(1)) / (1000 if finished.group(2) == "ms" else 1),
                p50_ms=percentile(0.5), p99_ms=percentile(0.99), cpu_seconds=cpu, succeeded=succeeded)


def sink_stats(sink_port):
    with socket.create_connection(("127.0.0.1", sink_port)) as sock:
        sock.sendall(b"GET /_bench/stats HTTP/1.1\r\nHost: sink\r\nConnection: close\r\n\r\n")
        reply = b""
        while chunk := sock.recv(65536):
            reply += chunk
    return json.loads(reply.split(b"\r\n\r\n", 1)[1])


def verify(label, out, before, after):
    """The generator's outcome and the sink's counters must agree exactly: every upload verified."""
    delta = {key: after[key] - before[key] for key in after}
    problems = []
    if out["failed"] or out["ok"] != out["requests"]:
        problems.append(f"{out['failed']} of {out['requests']} uploads failed: {out['errors']}")
    if delta["mismatches"]:
        problems.append(f"the sink found {delta['mismatches']} mismatching requests (its log: {work}/sink.log)")
    if delta["unverified"]:
        problems.append(f"the sink got {delta['unverified']} requests it could not verify")
    if delta["verified"] != out["ok"] or delta["requests"] != out["requests"]:
        problems.append(f"the sink verified {delta['verified']} of {delta['requests']} requests, "
                        f"the generator sent {out['requests']} and got {out['ok']} answers 200")
    if delta["file_bytes"] != out["file_bytes"]:
        problems.append(f"the sink verified {delta['file_bytes']} file bytes, the generator sent {out['file_bytes']}")
    if problems:
        raise BenchFailure(f"VERIFICATION FAILED for {label}:\n  " + "\n  ".join(problems))
    return delta


def measure(candidate, name, case, sink, sink_port):
    process, port = start(candidate, sink_port)
    try:
        pid = process.pid if process else None
        before, cpu0, sink0 = sink_stats(sink_port), cpu_seconds(pid) if pid else 0, cpu_seconds(sink.pid)
        if candidate in H2_CANDIDATES:
            out = h2_load(port, candidate in H2_TLS, MODES[candidate], **case)
        else:
            out = load(port, MODES[candidate], **case, header=candidate_header(candidate))
        cpu1, sink1 = cpu_seconds(pid) if pid else 0, cpu_seconds(sink.pid)
        delta = verify(f"{candidate}, {name}", out, before, sink_stats(sink_port))
        rss = peak_rss_mib(pid) if pid else None
    finally:
        if process:
            stop(process)
    return dict(out=out, proxy_cpu=cpu1 - cpu0 if pid else None, sink_cpu=sink1 - sink0, rss=rss,
                verified=delta["verified"], verified_bytes=delta["file_bytes"])


def candidate_header(candidate):
    return f"Authorization: Bearer {bearer_token()}" if candidate == "jwt" else None


def derived(sample, small):
    """The figures a table shows, from one measurement."""
    out = sample["out"]
    work_units = out["ok"] / 1e6 if small else out["file_bytes"] / (1 << 30)  # million requests or GiB
    per = (lambda cpu: None if cpu is None else cpu / work_units)
    return dict(value=out["ok"] / out["seconds"] if small else out["file_bytes"] / out["seconds"] / 1e6,
                p50=out["p50_ms"], p99=out["p99_ms"], proxy=per(sample["proxy_cpu"]), sink=per(sample["sink_cpu"]),
                load=per(out["cpu_seconds"]), rss=sample["rss"])


def median_of(samples, key):
    values = [sample[key] for sample in samples if sample[key] is not None]
    return statistics.median(values) if values else None


# --- the profile phase: where one 4 KiB upload's cost goes
PROFILED = ["nginx", "haproxy", "passthrough", "reencode", "rules", "digests", "jwt"]


def build_counter():
    """scripts/profile/alloccount.c, our LD_PRELOAD allocation counter, built with Debian's cc."""
    library = os.path.join(tools, "alloccount.so")
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", "-o", library,
                    os.path.join(root, "scripts/profile/alloccount.c")], check=True)
    return library


def allocation_counts(path):
    """allocation calls, reallocs, frees, bytes requested (the counter's shared file)."""
    return struct.unpack("<4Q", open(path, "rb").read(32))


def served(sink_port, window):
    """Runs `window()` (a load run) and returns the requests the sink verified meanwhile."""
    before = sink_stats(sink_port)
    out = window()
    delta = verify("profile", out, before, sink_stats(sink_port))
    return delta["verified"]


def traced_syscalls(candidate, process, load_window, sink_port):
    """`strace -c -f` attached to the proxy's processes over one load window: calls per kind."""
    pids = tree(process.pid)
    output = os.path.join(work, f"strace-{candidate}.txt")
    command = ["strace", "-c", "-f", "-o", output] + [arg for pid in pids for arg in ("-p", str(pid))]
    tracer = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    attached = 0
    while attached < len(pids):
        line = tracer.stderr.readline()
        if not line:
            raise BenchFailure(f"strace did not attach to {candidate} ({tracer.wait()})")
        attached += "attached" in line
    requests = served(sink_port, load_window)
    tracer.send_signal(signal.SIGINT)
    tracer.communicate(timeout=60)
    calls = {}
    for line in open(output).read().splitlines():
        fields = line.split()
        if len(fields) in (5, 6) and fields[0][0].isdigit() and fields[-1] != "total":
            calls[fields[-1]] = int(fields[3])
    return requests, calls


def sampled_symbols(candidate, process, load_window, sink_port, limit=12):
    """`perf record -g` over one load window: the symbols with the most samples of their own."""
    if not shutil.which("perf"):
        return None
    data = os.path.join(work, f"perf-{candidate}.data")
    if os.path.exists(data):
        os.remove(data)
    pids = ",".join(str(pid) for pid in tree(process.pid))
    recorder = subprocess.Popen(["perf", "record", "-F", "1999", "-g", "-o", data, "-p", pids],
                                stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "perf.log"), "ab"))
    for _ in range(200):  # perf writes the file's header once it is recording
        if os.path.exists(data) and os.path.getsize(data) > 0 or recorder.poll() is not None:
            break
        time.sleep(0.05)
    if recorder.poll() is not None:
        return None  # perf cannot sample in this machine
    served(sink_port, load_window)
    recorder.send_signal(signal.SIGINT)
    recorder.wait(60)
    report = subprocess.run(["perf", "report", "-i", data, "--stdio", "--no-children", "-g", "none",
                             "--sort", "dso,symbol", "--percent-limit", "0.5"], capture_output=True, text=True).stdout
    rows = []
    for line in report.splitlines():
        match = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)$", line)
        if match:
            rows.append((float(match.group(1)), match.group(2), re.split(r"\s{2,}", match.group(4).strip())[0]))
    demangled = demangle([symbol for _, _, symbol in rows[:limit]])
    return [(share, dso, name) for (share, dso, _), name in zip(rows[:limit], demangled)]


def demangle(symbols):
    """Swift symbols made readable by the toolchain's swift-demangle (left as they are without it)."""
    tool = shutil.which("swift-demangle") or "/opt/swift/usr/bin/swift-demangle"
    if not symbols or not os.path.exists(tool):
        return symbols
    done = subprocess.run([tool, "--simplified", "--compact"], input="\n".join(symbols) + "\n", capture_output=True,
                          text=True)
    names = done.stdout.splitlines()
    if len(names) != len(symbols):
        return symbols
    return [name if len(name) <= 110 else name[:107] + "..." for name in names]


def profile_candidate(candidate, sink_port, counter):
    """One proxy process under the allocation counter: a warm-up, then a window each for
    allocations and CPU, syscalls (strace) and samples (perf), every request verified."""
    counts_file = os.path.join(work, f"alloccount-{candidate}.bin")
    env = dict(os.environ, LD_PRELOAD=counter, ALLOCCOUNT_FILE=counts_file)
    process, port = start(candidate, sink_port, env=env)
    case = dict(conns=64, size=4096, seed=10000, duration=f"{profile_seconds}s")
    header = candidate_header(candidate)
    window = lambda: load(port, MODES[candidate], **case, header=header)
    try:
        served(sink_port, lambda: load(port, MODES[candidate], **dict(case, duration="1s"), header=header))
        counts0, cpu0 = allocation_counts(counts_file), cpu_seconds(process.pid)
        requests = served(sink_port, window)
        counts1, cpu1 = allocation_counts(counts_file), cpu_seconds(process.pid)
        traced, calls = traced_syscalls(candidate, process, window, sink_port)
        symbols = sampled_symbols(candidate, process, window, sink_port)
    finally:
        stop(process)
    allocations, reallocations, frees, allocated = (b - a for a, b in zip(counts0, counts1))
    return dict(requests=requests, cpu=(cpu1 - cpu0) / requests * 1e6, allocations=allocations / requests,
                reallocations=reallocations / requests, frees=frees / requests, bytes=allocated / requests,
                traced=traced, syscalls={name: count / traced for name, count in calls.items()}, symbols=symbols)


def profile_phase(sink_port):
    profiled = [candidate for candidate in PROFILED if candidate in candidates]
    if not profiled:
        return None
    counter = build_counter()
    results = {}
    for candidate in profiled:
        results[candidate] = profile_candidate(candidate, sink_port, counter)
        figures = results[candidate]
        print(f"bench: profile {candidate:12} {figures['requests']:,} requests: CPU {figures['cpu']:.1f} µs/req, "
              f"{figures['allocations']:.1f} allocations/req, {sum(figures['syscalls'].values()):.2f} syscalls/req",
              flush=True)
    return profile_section(results) + instructions_section()


def instructions_section():
    """Instructions per 4 KiB request, FormGate beside nginx, over HTTP/1.1 and h2
    (scripts/profile/instructions.sh under callgrind): figures the machine's load hardly moves."""
    if not shutil.which("valgrind"):
        return ["", "(instructions per request not counted: valgrind is missing)"]
    lines = ["", "**Instructions per 4 KiB request** (`scripts/profile/instructions.sh h1|h2`, callgrind; "
             f"{instruction_requests:,} requests counted after 640 uncounted, one worker each; h2: over TLS, "
             "64 connections × 10 streams, the 64 handshakes included; `make h2-instructions` is the h2 half; the "
             "release build links the Swift runtime statically, so its retains, releases and allocations count "
             "in `formgate`)", "",
             "| protocol | candidate | K instructions per request | by object (K per request) |", "|---|---|---:|---|"]
    for protocol in ("h1", "h2"):
        print(f"bench: instructions per request, {protocol} (callgrind)", flush=True)
        output = run([os.path.join(root, "scripts/profile/instructions.sh"), protocol, str(instruction_requests)],
                     env=dict(os.environ, BENCH_BINARY=binary), timeout=1800)
        print(output, flush=True)
        for line in output.splitlines():
            match = re.match(r"(\S+)\s+([\d.]+) K instructions per request \((.*)\)", line)
            if match:
                name = {"formgate": "FormGate pass-through", "formgate-rules": "FormGate rules"}.get(
                    match.group(1), match.group(1))
                lines.append(f"| {protocol} | {name} | {match.group(2)} | {match.group(3)} |")
    return lines


def profile_section(results):
    """The "Where the time goes" section: every figure from the windows just measured."""
    names = list(results)
    lines = ["Where the time goes", "",
             f"`scripts/bench.py --profile` (also part of `make bench`): the 4 KiB × 64 connections case again, each "
             f"proxy in a fresh process under `scripts/profile/alloccount.c` (an LD_PRELOAD counter of malloc, calloc, "
             f"realloc and the aligned allocators), after a 1 s warm-up, in three {profile_seconds} s windows: "
             "allocations and CPU (utime + stime from `/proc`, with the counter loaded), syscalls (`strace -c -f` "
             "attached to every process of the proxy), samples (`perf record -g`). Per request means per request "
             "the sink verified in that window. nginx allocates from its own per-request pools (`ngx_palloc`) and "
             "HAProxy from its own pools with per-thread caches (`pool_alloc`), so their malloc counts are the "
             "pools' blocks, not every object; strace slows every candidate, so its counts per request hold but "
             "its timings do not.", "",
             "| candidate | requests | CPU µs/req | allocations/req | reallocs/req | frees/req | bytes allocated/req "
             "| syscalls/req |", "|---|" + "---:|" * 7]
    for name in names:
        r = results[name]
        lines.append(f"| {LABELS[name]} | {r['requests']:,} | {r['cpu']:.1f} | {r['allocations']:.1f} | "
                     f"{r['reallocations']:.1f} | {r['frees']:.1f} | {r['bytes']:,.0f} | "
                     f"{sum(r['syscalls'].values()):.2f} |")
    kinds = sorted({kind for name in names for kind, count in results[name]["syscalls"].items() if count >= 0.01},
                   key=lambda kind: -max(results[name]["syscalls"].get(kind, 0) for name in names))
    lines += ["", "**Syscalls per request, by kind** (`strace -c`; kinds under 0.01 per request left out)", "",
              "| syscall | " + " | ".join(LABELS[name] for name in names) + " |", "|---|" + "---:|" * len(names)]
    for kind in kinds:
        lines.append(f"| `{kind}` | " + " | ".join(f"{results[name]['syscalls'].get(kind, 0):.2f}" for name in names)
                     + " |")
    lines.append("")
    for name in names:
        symbols = results[name]["symbols"]
        if symbols is None:
            lines += [f"**{LABELS[name]}**: perf could not sample on this machine.", ""]
            continue
        lines += [f"**Top symbols, {LABELS[name]}** (`perf report --no-children`, share of the proxy's samples)", "",
                  "| self | object | symbol |", "|---:|---|---|"]
        lines += [f"| {share:.1f}% | `{dso}` | `{symbol.replace('|', '¦')}` |" for share, dso, symbol in symbols]
        lines.append("")
    return lines


# --- the run
def main():
    global binary
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    # The binary measured is a copy made now: a rebuild during the run (`make release` in
    # another shell) neither stops it ("Text file busy") nor changes what later rounds measure.
    if os.path.exists(binary):
        frozen = os.path.join(work, "formgate")
        shutil.copy2(binary, frozen)
        binary = frozen
    measured = facts()
    build_tools()
    parser_table = None
    parser_binary = os.path.join(root, ".build/release/multipart-bench")
    if not partial and os.path.exists(parser_binary):
        print("bench: multipart-bench (in process, under the allocation counter)", flush=True)
        counts_file = os.path.join(work, "alloccount-multipart-bench.bin")
        parser_table = run([parser_binary, "--markdown"],
                           env=dict(os.environ, LD_PRELOAD=build_counter(), ALLOCCOUNT_FILE=counts_file))
        print(parser_table, flush=True)
    sink, sink_port = spawn_go([os.path.join(tools, "sink")], "sink.log")
    if profile_only:
        section = profile_phase(sink_port)
        print("\n" + "\n".join(heading("##", section or ["Where the time goes", "", "(no candidate to profile)"])))
        print("\nbench: the profile phase alone (--profile): docs left alone.")
        return
    table = case_table()
    cases = [key for key in ALL_CASES if key in wanted]
    skipped, not_measured = [candidate for candidate in candidates if candidate in FORMGATE_H2], []
    if skipped and H2_CASES & set(cases):
        reason = formgate_h2_unavailable(sink_port)
        if reason:
            print(f"bench: FormGate's h2 candidates ({' '.join(skipped)}) skipped: {reason}", flush=True)
            candidates[:] = [candidate for candidate in candidates if candidate not in FORMGATE_H2]
            not_measured = [f"FormGate over HTTP/2 was not measured in this run: {reason}.", ""]
    results = {key: {candidate: [] for candidate in candidates if applies(candidate, key)} for key in cases}
    verified = [0, 0]
    began, load_before = time.time(), loadavg()
    for round_index in range(repeats):
        order = candidates if round_index % 2 == 0 else list(reversed(candidates))
        for key in cases:
            name, case = table[key]
            for candidate in order:
                if candidate not in results[key]:
                    continue
                sample = measure(candidate, name, case, sink, sink_port)
                verified[0] += sample["verified"]
                verified[1] += sample["verified_bytes"]
                figures = derived(sample, key in SMALL_CASES)
                results[key][candidate].append(figures)
                print(f"bench: round {round_index + 1} {name:22} {candidate:15} " + shown(figures, key in SMALL_CASES),
                      flush=True)
    memory = None
    heavy = next((c for c in ("digests", "rules", "reencode") if c in candidates), None)
    if heavy and rss_gib > 0 and not partial:
        case = dict(conns=8, size=rss_gib << 30, seed=1000, one_seed=True)
        sample = measure(heavy, f"8 × {rss_gib} GiB", case, sink, sink_port)
        verified[0] += sample["verified"]
        verified[1] += sample["verified_bytes"]
        memory = (heavy, derived(sample, False))
        print(f"bench: 8 × {rss_gib} GiB through {heavy}: {memory[1]['value']:,.0f} MB/s, "
              f"peak RSS {memory[1]['rss']:.1f} MiB", flush=True)
    crowd = None
    if heavy and crowd_uploads > 0 and not partial:
        # Many uploads at once: every one holds its connection, its parser and its buffers.
        case = dict(conns=crowd_uploads, size=2 << 20, seed=2000, one_seed=True)
        sample = measure(heavy, f"{crowd_uploads:,} × 2 MiB", case, sink, sink_port)
        verified[0] += sample["verified"]
        verified[1] += sample["verified_bytes"]
        crowd = derived(sample, False)
        print(f"bench: {crowd_uploads:,} concurrent 2 MiB uploads through {heavy}: {crowd['value']:,.0f} MB/s, "
              f"peak RSS {crowd['rss']:.1f} MiB", flush=True)
        if memory:
            memory = memory + (crowd,)
    tus = None
    if "rules" in candidates and "1x" in cases and not partial and os.environ.get("BENCH_TUS", "1") != "0":
        # The resumable row (scripts/bench_tus.py): the 1 × 1 GiB case's file through a tus route.
        big = table["1x"][1]
        tus = bench_tus.measure(sys.modules[__name__], sink_port, big["seed"], big["size"])
        verified[0] += 1
        verified[1] += big["size"]
        print(f"bench: tus {mib(large_mib)} in {tus['patches']} PATCHes: {tus['value']:,.0f} MB/s, "
              f"proxy CPU {tus['proxy']:.2f} s/GiB, peak RSS {tus['rss']:.1f} MiB", flush=True)
    inspection = None
    if "rules" in candidates and "1x" in cases and not partial and os.environ.get("BENCH_INSPECTION", "1") != "0":
        # The inspection rows (scripts/bench_inspection.py): scan (clamd) and strip_metadata.
        inspection = bench_inspection.measure(sys.modules[__name__], sink_port, table["1x"][1])
        verified[0] += inspection["verified"][0]
        verified[1] += inspection["verified"][1]
    shared = None
    if "rules" in candidates and "small" in cases and not partial and os.environ.get("BENCH_SHARED", "1") != "0":
        # The shared rate-limit row (scripts/bench_shared.py): 4 KiB uploads, per-process limits against Redis.
        shared = bench_shared.measure(sys.modules[__name__], sink_port, table["small"][1])
        verified[0] += shared["verified"][0]
        verified[1] += shared["verified"][1]
    live = None
    if "rules" in candidates and "small" in cases and not partial and os.environ.get("BENCH_LIVE", "1") != "0":
        # The live view and tracing rows (scripts/bench_live.py): 4 KiB uploads with and without a reader of
        # /uploads/events, GET /uploads under 1,000 uploads in flight, 4 KiB uploads with tracing.
        live = bench_live.measure(sys.modules[__name__], sink_port, table["small"][1])
        verified[0] += live["verified"][0]
        verified[1] += live["verified"][1]
    timing = dict(elapsed=time.time() - began, load_before=load_before, load_after=loadavg())
    profile = None if partial else profile_phase(sink_port)
    h1_cases, h2_cases = [key for key in cases if key not in H2_CASES], [key for key in cases if key in H2_CASES]
    tables = (headline(results, h1_cases, table, BEST) + headline(results, h1_cases, table, "nginx") +
              jwt_cost(results) + headline(results, h2_cases, table, BEST) +
              headline(results, h2_cases, table, "nginx-h2") + not_measured + summary(results, cases, table))
    print(f"\nbench: the sink verified all {verified[0]:,} requests ({verified[1] / (1 << 30):,.1f} GiB of file "
          f"content, byte for byte): 0 mismatches, 0 unverified.\n")
    print("\n".join(tables))
    if partial:
        print("\nbench: a partial run (BENCH_CASES, BENCH_CANDIDATES or BENCH_CORRUPT): docs left alone.")
        return
    print("\n" + "\n".join(heading("##", profile or [])))
    against = against_baseline(tables, measured)
    rules_1x = results.get("1x", {}).get("rules")
    rules_figures = dict(value=median_of(rules_1x, "value"), proxy=median_of(rules_1x, "proxy")) if rules_1x else None
    tus_lines = (bench_tus.lines(tus, rules_figures, mib(large_mib)) + bench_inspection.lines(inspection, mib(large_mib))
                 + bench_shared.lines(shared) + bench_live.lines(live))
    print("\n".join(tus_lines))
    write_docs(results, cases, table, tables, parser_table, memory, verified, timing, measured, profile, against,
               tus_lines)


def against_baseline(tables, measured):
    """This run beside the baseline block (`scripts/bench_baseline.py`), read before the README
    block is rewritten; printed, and a section of docs/benchmarks.md."""
    try:
        import bench_baseline
        baseline = bench_baseline.read_baseline(os.path.join(root, "README.md"))
        lines, summary = bench_baseline.section(baseline, "\n".join(tables), measured["commit"],
                                                os.path.join(root, ".build/bench/baseline-runs.json"))
    except (OSError, ValueError, KeyError) as error:
        print(f"bench: against the baseline: not compared ({error})", flush=True)
        return []
    print("\n" + "\n".join(lines + summary), flush=True)
    return lines


def shown(figures, small):
    if small:
        return (f"{figures['value']:,.0f} req/s p50 {figures['p50']:.2f} ms p99 {figures['p99']:.2f} ms, CPU µs/req "
                f"proxy {cell(figures['proxy'], 1)} sink {figures['sink']:.1f} load {figures['load']:.1f}, "
                f"RSS {cell(figures['rss'], 1)} MiB")
    return (f"{figures['value']:,.0f} MB/s, CPU s/GiB proxy {cell(figures['proxy'], 2)} sink {figures['sink']:.2f} "
            f"load {figures['load']:.2f}, RSS {cell(figures['rss'], 1)} MiB")


def cell(value, places, suffix=""):
    return "—" if value is None else f"{value:,.{places}f}{suffix}"


def loadavg():
    return open("/proc/loadavg").read().split()[0]


def best_peer(results, key):
    """The plain proxy (PEERS) with the highest median throughput in a case, or None."""
    measured = [name for name in PEERS[key in H2_CASES] if results[key].get(name)]
    return max(measured, key=lambda name: median_of(results[key][name], "value"), default=None)


def headline(results, cases, table, reference):
    """Each candidate's median throughput (MB/s or req/s) as a ratio to the reference's, one
    column per case. The reference: nginx over the same protocol, or (BEST) the fastest plain
    proxy of each case, which the table's first row names."""
    if not cases:
        return []
    h2 = cases[0] in H2_CASES
    if reference == BEST:
        references = {key: best_peer(results, key) for key in cases}
        if not any(references.values()):
            return []
        peers = [LABELS[name] for name in PEERS[h2] if name in candidates]
        peers = " and ".join([", ".join(peers[:-1]), peers[-1]] if len(peers) > 1 else peers)
        title = "HTTP/2 throughput × the best plain proxy (TLS)" if h2 else "Throughput × the best plain proxy"
        note = (f"(medians, same run; each column's reference is the fastest of {peers} in that case, named in "
                "the first row)")
    elif reference in candidates:
        references = {key: reference for key in cases}
        title = "HTTP/2 throughput × nginx h2 (TLS)" if h2 else "Throughput × nginx"
        note = "(medians, same run)"
    else:
        return []
    lines = [f"**{title}** {note}", "",
             "| candidate | " + " | ".join(table[key][0] for key in cases) + " |", "|---|" + "---:|" * len(cases)]
    if reference == BEST:
        lines.append("| best plain proxy | " + " | ".join(LABELS[references[key]] if references[key] else "—"
                                                        for key in cases) + " |")
    for candidate in candidates:
        if not any(candidate in results[key] for key in cases):
            continue
        ratios = [median_of(results[key][candidate], "value") / median_of(results[key][references[key]], "value")
                  if candidate in results[key] and references[key] else None for key in cases]
        lines.append(f"| {LABELS[candidate]} | " + " | ".join("—" if ratio is None else f"{ratio:.2f}×"
                                                              for ratio in ratios) + " |")
    return lines + [""]


def jwt_cost(results):
    """What HS256 authentication adds to a 4 KiB upload: CPU per request, jwt against rules."""
    small = results.get("small", {})
    if not small.get("jwt") or not small.get("rules"):
        return []
    jwt, rules = median_of(small["jwt"], "proxy"), median_of(small["rules"], "proxy")
    if jwt is None or rules is None:
        return []
    return [f"**JWT authentication** (HS256, 4 KiB uploads): {jwt:.1f} µs of proxy CPU per request against "
            f"{rules:.1f} µs for the same rules without `auth:`, {(jwt / rules - 1) * 100:+.1f} %.", ""]


def summary(results, cases, table):
    """One markdown table per case, medians, with the ratios to the case's references measured
    in this run (the plain proxies over the same protocol, and direct for HTTP/1.1)."""
    lines = []
    for key in cases:
        small = key in SMALL_CASES
        medians = {c: {k: median_of(results[key][c], k) for k in results[key][c][0]} for c in results[key]}
        references = [name for name in REFERENCES[key in H2_CASES] if name in medians]
        def ratio(candidate, reference):
            return f"{medians[candidate]['value'] / medians[reference]['value']:.2f}×"
        ratios = "".join(f" × {LABELS[name]} |" for name in references)
        lines += [f"**{table[key][0]}**", ""]
        if small:
            lines += [f"| candidate | req/s |{ratios} p50 ms | p99 ms | proxy CPU µs/req | "
                      "sink CPU µs/req | load CPU µs/req | peak RSS MiB |", "|---|" + "---:|" * (7 + len(references))]
        else:
            lines += [f"| candidate | MB/s |{ratios} proxy CPU s/GiB | sink CPU s/GiB | "
                      "load CPU s/GiB | peak RSS MiB |", "|---|" + "---:|" * (5 + len(references))]
        for candidate in results[key]:
            m = medians[candidate]
            row = [LABELS[candidate], f"{m['value']:,.0f}"] + [ratio(candidate, name) for name in references]
            if small:
                row += [f"{m['p50']:.2f}", f"{m['p99']:.2f}", cell(m["proxy"], 1), cell(m["sink"], 1), cell(m["load"], 1)]
            else:
                row += [cell(m["proxy"], 2), cell(m["sink"], 2), cell(m["load"], 2)]
            lines.append("| " + " | ".join(row + [cell(m["rss"], 1)]) + " |")
        lines.append("")
    return lines


def facts():
    def version(command, pattern=None):
        try:
            done = subprocess.run(command, capture_output=True, text=True)
            text = done.stdout + done.stderr
            return (re.search(pattern, text).group(1) if pattern else text.strip().splitlines()[0])
        except (OSError, AttributeError, IndexError):
            return "unknown"
    model = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read())
    # The commit measured; "+changes" when files other than this script's outputs differ from it.
    commit = version(["git", "-C", root, "rev-parse", "--short", "HEAD"])
    changed = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no", "--", ".",
                              ":(exclude)docs/benchmarks.md", ":(exclude)docs/benchmarks.png", ":(exclude)README.md"],
                             capture_output=True, text=True).stdout.strip()
    commit += " +changes" if changed else ""
    return dict(commit=commit, cpu=model.group(1).strip() if model else "unknown", kernel=os.uname().release,
                nginx=version([shutil.which("nginx") or "/usr/sbin/nginx", "-v"], r"nginx/(\S+)"),
                haproxy=version([shutil.which("haproxy") or "/usr/sbin/haproxy", "-v"], r"HAProxy version (\S+)"),
                caddy=version([shutil.which("caddy") or "/usr/bin/caddy", "version"], r"v?(\d\S*)"),
                go=version(["go", "version"], r"go version go(\S+)"),
                formgate=version([binary, "version"]), h2load=version(["h2load", "--version"], r"(nghttp2/\S+)"))


def write_docs(results, cases, table, tables, parser_table, memory, verified, timing, f, profile, against,
               tus_lines=()):
    today = time.strftime("%Y-%m-%d")
    header = [f"`make bench` (`scripts/bench.py`) on {today}, commit `{f['commit']}`, {f['formgate']} (release build), "
              f"nginx {f['nginx']}, HAProxy {f['haproxy']}, Caddy {f['caddy']}, Go {f['go']}; {cores} cores "
              f"({f['cpu']}), Linux {f['kernel']}, loopback. Generator, proxy and sink share the cores. Medians of "
              f"{repeats} rounds, candidates alternating (order reversed every other round); ratios are to the plain "
              "proxies (nginx, HAProxy and Caddy; over h2 nginx and Caddy with TLS) and to direct in the same run, "
              "the headline's to the fastest plain proxy of each case. CPU is utime + stime from `/proc` around "
              "each measurement: per GiB of file content for large uploads, per request for small ones; peak RSS is "
              "the proxy's VmHWM.",
              "",
              f"Whole run {timing['elapsed']:.0f} s; load average (1 min) {timing['load_before']} before, "
              f"{timing['load_after']} after: other work on the machine moves every figure, the ratios less.", "",
              f"The sink verified all {verified[0]:,} requests of this run ({verified[1] / (1 << 30):,.1f} GiB of "
              "file content, compared byte for byte with what the generator sent): 0 mismatches, 0 unverified.",
              ""]
    memory_line = []
    if memory:
        memory_line = [f"Memory at scale: 8 concurrent {rss_gib} GiB uploads through FormGate {memory[0]}, once: "
                       f"{memory[1]['value']:,.0f} MB/s, peak RSS {memory[1]['rss']:.1f} MiB.", ""]
    crowd = memory[2] if memory and len(memory) > 2 else None
    if crowd:
        memory_line[-1:-1] = [f"{crowd_uploads:,} concurrent 2 MiB uploads (one per connection) through FormGate "
                              f"{memory[0]}, once: {crowd['value']:,.0f} MB/s, peak RSS {crowd['rss']:.1f} MiB."]
    parser = []
    if parser_table:
        parser = ["The parser in process", "",
                  "`multipart-bench --markdown` (Sources/MultipartBench): parse + re-encode under a new boundary, "
                  "fed in 64 KiB reads, into a sink that takes bytes as the proxy's upstream output does (file "
                  "content of 2 KiB or more moves as the input's chains, `InputLoan`; heads, delimiters and short "
                  "pieces are copied), against a plain `memmem` scan of the same bytes for the same delimiter, in "
                  "the same run (medians of 7); case (d) hashes on a pool thread, as the proxy hashes a large file, and its reference is SHA-256 alone over the "
                  "same reads (OpenSSL's EVP, SHA-NI here); case (e) runs 5,000 fields and 5,000 small JPEG-signed "
                  "files through rules (sniff, rename, a `{uuid}{ext}` file name, an injected field, sha256): the "
                  "rules' own per-part cost, and what they allocate per file (the new name and the digest are "
                  "new strings the log keeps). Allocations per part: heap allocations of one run, after "
                  "a warm-up run, counted by `scripts/profile/alloccount.c`, divided by the body's parts.",
                  "", parser_table, ""]
    rounds = ["## Every round", "", "Spread: (highest − lowest) / median.", "",
              "| case | candidate | " + " | ".join(f"round {i + 1}" for i in range(repeats)) + " | spread |",
              "|---|---|" + "---:|" * (repeats + 1)]
    for key in cases:
        for candidate in results[key]:
            unit = "{:,.0f} req/s" if key in SMALL_CASES else "{:,.0f} MB/s"
            values = [sample["value"] for sample in results[key][candidate]]
            spread = (max(values) - min(values)) / statistics.median(values)
            rounds.append(f"| {table[key][0]} | {LABELS[candidate]} | " +
                          " | ".join(unit.format(value) for value in values) + f" | {spread:.0%} |")
    configs = ["## What ran", "",
               "Generator: `scripts/bench/load` (raw HTTP/1.1 over TCP, one upload per connection for the large cases, "
               "keep-alive back to back for the small one). Sink: `scripts/bench/sink` (net/http + mime/multipart; "
               "one process, Go's scheduler on every core). Both are Go, standard library only, and share no code "
               "with FormGate. Each file's content comes from a seed (64 KiB pages stamped with the seed and their "
               "index, the rest from one random block), so the sink compares every byte it receives with what was "
               "sent at memory speed. It parses every body with `mime/multipart`, as an upload server would, and "
               "answers 422 and counts a mismatch when anything differs: for direct, the plain proxies and the "
               "pass-through route the client's boundary and the whole body byte for byte; for the rewriting "
               "candidates the multipart structure (boundary changed, exactly the expected fields with their values, "
               "one file part with its name, file name and type, every file byte and the size), for the digests "
               "route also the `file.sha256` field against the SHA-256 the generator computed before sending.", "",
               "nginx (`nginx.conf`; each run picks free ports, shown here as 8080 and 9000):", "", "```nginx",
               nginx_config(8080, 9000, ".build/bench/run/nginx").rstrip(), "```", "",
               "HAProxy (`haproxy.cfg`, started as `haproxy -f haproxy.cfg`: without `daemon` one process in the "
               "foreground, no master, its threads counted in the process's own `/proc` figures):", "", "```haproxy",
               haproxy_config(8080, 9000).rstrip(), "```", "",
               "Caddy (`Caddyfile`, started as `caddy run --config Caddyfile --adapter caddyfile` with "
               "`XDG_CONFIG_HOME` and `XDG_DATA_HOME` in the run directory; GOMAXPROCS Go's default):", "",
               "```caddy", caddy_config(8080, 9000).rstrip(), "```", "",
               "FormGate (one config per candidate, one route each; the route block differs):", "", "```yaml",
               formgate_config("rules", 8080, 9000).rstrip(), "```", "",
               "Route blocks: pass-through (no `multipart` key), re-encode `multipart: {}`, rules as above, "
               "digests the rules plus `digest: { algorithms: [sha256] }`, JWT (4 KiB case only) the rules behind "
               "`" + JWT_AUTH.strip() + "`, every request carrying an HS256 bearer token made by the script "
               "(`bearer_token()`, Python's `hmac`).", "",
               "Go rewriter: `scripts/bench/rewriter` (what a user might write instead: `mime/multipart` reader and "
               "writer through an `io.Pipe`, `httputil.ReverseProxy`, a `http.Transport` keeping up to 1024 idle "
               "upstream connections).", "",
               f"HTTP/2 cases: the generator is `h2load` ({f['h2load']}, Debian's nghttp2-client, "
               f"{h2load_threads} thread{'s' if h2load_threads > 1 else ''}), posting with `-d` a body file "
               "`scripts/bench/h2body` wrote from the same payload (every request of a case carries the same seed, "
               "and the sink verifies each as above); `-n` requests (the large cases one upload per connection, the "
               f"4 KiB case {h2_small_requests:,} over `-c 64 -m 10`); latencies from its `--log-file`; its CPU "
               "from `wait4`. TLS: a self-signed P-256 certificate made at run time. nginx for h2 (the h2c "
               "candidate listens `http2` without `ssl`):", "", "```nginx",
               nginx_h2_config(8443, 9000, ".build/bench/run/nginx", True, "bench-cert.pem", "bench-key.pem").rstrip(),
               "```", "", "Caddy for h2 (TLS, the same certificate; its HTTP/2 is Go's, with the default flow-control "
               "windows: Caddy 2.6 has no setting for them):", "", "```caddy",
               caddy_config(8443, 9000, True, "bench-cert.pem", "bench-key.pem").rstrip(),
               "```", "", "FormGate for h2 (the h2c candidate's listener is `{ address: ..., http2: { h2c: true } }`):",
               "", "```yaml", formgate_h2_config("rules", 8443, 9000, True, "bench-cert.pem", "bench-key.pem").rstrip(),
               "```", ""]
    plot = plot_png(results, [key for key in cases if key not in H2_CASES], table)
    body = (["# Benchmarks", "", "Generated by `scripts/bench.py` (`make bench`); do not edit by hand.", ""] + header +
            ["## The proxy, side by side", ""] + tables + memory_line + list(tus_lines) +
            ([f"![throughput per candidate](benchmarks.png)", ""] if plot else []) + heading("##", parser) +
            heading("##", profile or []) + against + rounds +
            [""] + configs +
            [""])
    open(os.path.join(root, "docs/benchmarks.md"), "w").write("\n".join(body))
    readme_path = os.path.join(root, "README.md")
    readme = open(readme_path).read()
    begin, end = "<!-- bench:start -->", "<!-- bench:end -->"
    if begin in readme and end in readme:
        block = header + tables + memory_line + list(tus_lines) + ([f"![throughput per candidate](docs/benchmarks.png)", ""] if plot else [])
        block += heading("###", parser)
        readme = readme[:readme.index(begin) + len(begin)] + "\n" + "\n".join(block) + "\n" + readme[readme.index(end):]
        open(readme_path, "w").write(readme)
    print("bench: wrote docs/benchmarks.md" + (", docs/benchmarks.png" if plot else "") + " and the README block")


def heading(level, section):
    """The section with its first line made a markdown heading of this level."""
    return [f"{level} {section[0]}"] + section[1:] if section else []


def plot_png(results, cases, table):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        return False
    data = os.path.join(work, "plot.dat")
    with open(data, "w") as handle:
        for candidate in [c for c in candidates if any(c in results[key] for key in cases)]:
            label = LABELS[candidate].replace("FormGate ", "FG ").replace(" ", "_")
            handle.write(label + " " + " ".join(f"{median_of(results[key].get(candidate, []), 'value') or 0:.0f}"
                                                for key in cases) + "\n")
    plots = []
    for column, key in enumerate(cases, start=2):
        unit = "requests/s" if key == "small" else "MB/s"
        plots.append(f'set ylabel "{unit}"\nset title "{table[key][0]}"\n'
                     f'plot "{data}" using {column}:xtic(1) notitle lc rgb "#47a"')
    script = f"""set terminal pngcairo size 1200,420 font ",9"
set output "{os.path.join(root, 'docs/benchmarks.png')}"
set multiplot layout 1,{len(cases)} title "scripts/bench.py, {time.strftime('%Y-%m-%d')}, {cores} cores, loopback (medians)"
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.8
set grid ytics
set yrange [0:*]
set xtics rotate by -35 noenhanced
""" + "\n".join(plots) + "\nunset multiplot\n"
    subprocess.run([gnuplot], input=script, text=True, check=True)
    return True


if __name__ == "__main__":
    try:
        main()
    except BenchFailure as failure:
        print(f"\nbench: FAILED\n{failure}", file=sys.stderr)
        sys.exit(1)
    finally:
        for each in processes:
            stop(each)
