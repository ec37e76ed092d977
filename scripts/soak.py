#!/usr/bin/env python3
"""Soak test: SECONDS (default 1800) of mixed good and hostile load on a release FormGate.

Starts the demo upstream and `formgate run` (release build) on loopback, then drives them from
this process (a second process, several threads): good uploads on the streaming and the
buffered route with random sizes (each upstream receipt's sha256 checked), keep-alive
sequences, pass-through GETs, every hostile fixture of Tests/Fixtures/hostile with its expected
status, and clients aborting mid-body. Every 10 s it samples FormGate's RSS, open descriptors
and spool files. Writes .build/soak-report.json (read by scripts/robustness-report.py), with
the commit and code it ran on (scripts/provenance.py: `make soak` builds the release binary
from that code first), and exits 1 on any unexpected status or when RSS or descriptors grew
over the run.

    make soak                      # 30 minutes
    make soak SOAK_SECONDS=120     # a short run
"""
import hashlib, json, os, random, shutil, socket, subprocess, sys, tempfile, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import provenance  # noqa: E402

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
ran_on = provenance.identity()
binary = os.path.join(root, ".build/release/formgate")
seconds = int(sys.argv[1]) if len(sys.argv) > 1 else 1800
threads = int(os.environ.get("SOAK_THREADS", "6"))
manifest = json.load(open(os.path.join(root, "Tests/Fixtures/hostile/manifest.json")))["cases"]
hostile = [(case, open(os.path.join(root, "Tests/Fixtures/hostile", case["file"]), "rb").read())
           for case in manifest]


def start(arguments):
    process = subprocess.Popen([binary] + arguments, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    line = b""
    deadline = time.time() + 20
    while b"listening on " not in line and time.time() < deadline:
        line = process.stderr.readline()
    if b"listening on " not in line:
        sys.exit(f"{arguments[0]} did not start")
    address = line.split(b"listening on ")[1].split()[0].decode().rstrip(",")
    threading.Thread(target=lambda: process.stderr.read(), daemon=True).start()
    return process, int(address.rsplit(":", 1)[1])


spool = tempfile.mkdtemp(prefix="formgate-soak-")
upstream, upstream_port = start(["demo-upstream", "--listen", "127.0.0.1:0"])
config = os.path.join(spool, "..", os.path.basename(spool) + ".yaml")
with open(config, "w") as handle:
    handle.write(f"""listen: 127.0.0.1:0
workers: 2
upstream: http://127.0.0.1:{upstream_port}
access_log: off
temp_dir: {spool}
timeouts: {{ header: 10s, idle: 20s, upstream_response: 30s }}
limits: {{ connections: 2000 }}
routes:
  - match: {{ path: /upload }}
    multipart:
      rename_fields: {{ upload: file }}
      sniff: {{ bytes: 4096, content_type: override }}
      inject: [{{ name: via, value: formgate }}]
      digest: {{ algorithms: [sha256, size] }}
  - match: {{ path: /legacy }}
    request_body: buffer
    multipart: {{ filename: "{{field}}{{ext}}" }}
""")
proxy, port = start(["run", "-c", config])


def sample():
    def status(key):
        for line in open(f"/proc/{proxy.pid}/status"):
            if line.startswith(key):
                return int(line.split()[1])
    return {"t": round(time.time() - began), "rss_kib": status("VmRSS:"),
            "fds": len(os.listdir(f"/proc/{proxy.pid}/fd")), "spool_files": len(os.listdir(spool))}


def read_response(sock):
    """One response: (status, body); Content-Length framing (all FormGate and the demo send)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split()[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, rest[:length]


def upload(path, size, rng, keep_alive=False):
    content = rng.randbytes(size)
    if rng.random() < 0.3:
        content = b"\x89PNG\r\n\x1a\n" + content
    boundary = "soak%016x" % rng.getrandbits(64)
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nsoak ☀\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"a b.jpg\"\r\n"
            f"Content-Type: image/jpeg\r\n\r\n").encode() + content + f"\r\n--{boundary}--\r\n".encode()
    head = (f"POST {path} HTTP/1.1\r\nHost: soak\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n"
            f"Content-Length: {len(body)}\r\n{'' if keep_alive else 'Connection: close' + chr(13) + chr(10)}\r\n")
    return head.encode() + body, hashlib.sha256(content).hexdigest()


lock = threading.Lock()
counts = {}
unexpected = []
stop_at = time.time() + seconds
began = time.time()


def record(kind, ok, detail=""):
    with lock:
        entry = counts.setdefault(kind, [0, 0])
        entry[0] += 1
        if not ok:
            entry[1] += 1
            if len(unexpected) < 50:
                unexpected.append(f"{kind}: {detail}"[:300])


def check_receipt(kind, status, body, digest):
    if status != 200:
        return record(kind, False, f"status {status} {body[:200]!r}")
    receipt = json.loads(body)
    files = receipt.get("files", [])
    ok = len(files) == 1 and files[0].get("sha256") == digest
    if kind == "good-stream":
        # Injected first, the digest fields appended after the file.
        fields = {f["name"]: f["value"] for f in receipt["fields"]}
        ok = ok and receipt["parts"] == ["via", "title", "file", "file.sha256", "file.size"]
        ok = ok and fields["file.sha256"] == digest and fields["via"] == "formgate" and files[0]["name"] == "file"
    record(kind, ok, f"receipt {body[:300]!r}")


def worker(seed):
    rng = random.Random(seed)
    while time.time() < stop_at:
        roll = rng.random()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
                if roll < 0.35:
                    path = rng.choice(["/upload", "/legacy"])
                    size = rng.choice([0, 100, 4096, 65536, rng.randrange(1, 2 << 20)])
                    request, digest = upload(path, size, rng)
                    sock.sendall(request)
                    status, body = read_response(sock)
                    check_receipt("good-stream" if path == "/upload" else "good-buffer", status, body, digest)
                elif roll < 0.45:
                    for index in range(rng.randrange(2, 10)):
                        request, digest = upload("/upload", rng.randrange(0, 32768), rng, keep_alive=True)
                        sock.sendall(request)
                        status, body = read_response(sock)
                        check_receipt("good-keepalive", status, body, digest)
                elif roll < 0.55:
                    sock.sendall(b"GET /status?x=1 HTTP/1.1\r\nHost: soak\r\nConnection: close\r\n\r\n")
                    status, _ = read_response(sock)
                    record("passthrough", status == 200, f"status {status}")
                elif roll < 0.65:
                    request, _ = upload(rng.choice(["/upload", "/legacy"]), 256 * 1024, rng)
                    sock.sendall(request[: rng.randrange(1, len(request) - 1)])
                    record("client-abort", True)
                else:
                    case, request = rng.choice(hostile)
                    sock.sendall(request)
                    try:
                        sock.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                    status, _ = read_response(sock)
                    record("hostile", status == case["status"], f"{case['name']}: {status} != {case['status']}")
        except (ConnectionResetError, BrokenPipeError) as error:
            # A refusal may close before the whole hostile request was sent.
            if roll < 0.65:
                record("transport", False, repr(error))
        except Exception as error:  # noqa: BLE001 - a soak counts every surprise
            record("transport", False, repr(error))


workers = [threading.Thread(target=worker, args=(index,), daemon=True) for index in range(threads)]
samples = [sample()]
for thread in workers:
    thread.start()
while any(thread.is_alive() for thread in workers):
    time.sleep(min(10, max(0.1, stop_at - time.time() + 1)))
    samples.append(sample())
    with lock:
        total = sum(entry[0] for entry in counts.values())
        bad = sum(entry[1] for entry in counts.values())
    print(f"soak t={samples[-1]['t']}s requests={total} unexpected={bad} rss={samples[-1]['rss_kib']}KiB "
          f"fds={samples[-1]['fds']} spool={samples[-1]['spool_files']}", flush=True)
time.sleep(1)
samples.append(sample())
proxy.terminate()
upstream.terminate()
proxy.wait(10)
upstream.wait(10)
spool_files_end = samples[-1]["spool_files"]
os.remove(config)
shutil.rmtree(spool, ignore_errors=True)

# Growth: the last tenth of the run against the first tenth after warm-up (both RSS maxima).
warm = [s for s in samples if s["t"] >= min(60, seconds / 10)]
tenth = max(1, len(warm) // 10)
rss_early = max(s["rss_kib"] for s in warm[:tenth])
rss_late = max(s["rss_kib"] for s in warm[-tenth:])
report = {
    **ran_on, "changed_during_run": provenance.differences(ran_on, provenance.identity()),
    "seconds": seconds, "threads": threads,
    "requests": sum(entry[0] for entry in counts.values()),
    "unexpected": sum(entry[1] for entry in counts.values()),
    "by_kind": {kind: {"requests": entry[0], "unexpected": entry[1]} for kind, entry in sorted(counts.items())},
    "rss_kib": {"start": samples[0]["rss_kib"], "early_max": rss_early, "late_max": rss_late,
                "max": max(s["rss_kib"] for s in samples)},
    "fds": {"start": samples[0]["fds"], "early_max": max(s["fds"] for s in warm[:tenth]),
            "end": samples[-1]["fds"], "max": max(s["fds"] for s in samples)},
    "spool_files_end": spool_files_end,
    "examples": unexpected[:20],
    "date": time.strftime("%Y-%m-%d"), "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
}
# Descriptors: the pool's idle upstream connections come and go by a few (a short run has one
# early sample); a leak grows with the requests, by thousands over a run.
flat = rss_late <= rss_early * 1.10 + 4096 and report["fds"]["end"] <= report["fds"]["early_max"] + 4
report["passed"] = report["unexpected"] == 0 and flat and report["spool_files_end"] == 0
os.makedirs(os.path.join(root, ".build"), exist_ok=True)
json.dump(report, open(os.path.join(root, ".build/soak-report.json"), "w"), indent=1)
print(json.dumps(report, indent=1))
sys.exit(0 if report["passed"] else 1)
