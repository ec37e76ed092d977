#!/usr/bin/env python3
"""The inspection rows of `make bench` (issue 30): scripts/bench.py calls `measure` and `lines`.

Alone, without the rest of the bench: `scripts/bench_inspection.py` (with the release build in
place; it builds the Go tools and starts the sink as bench.py does, prints the rows and leaves the
docs alone). bench.py runs them after the resumable row unless BENCH_INSPECTION=0.

Scan: the 1 × 1 GiB case's upload (the Go generator, seed 1000; the sink verifies every file
byte, as for the rules candidate) through the rules route with `multipart.scan: { clamd: default }`
against the same route without `scan`, and clamd alone: a `zINSTREAM` of the same 1 GiB of file
content (read from the body file scripts/bench/h2body writes for that seed and size) straight to
clamd's socket in 1 MiB chunks (FormGate's largest), from the first byte to clamd's answer.
BENCH_REPEATS rounds, the order reversed every other round; medians. The scanner is Debian's
clamd (/usr/sbin/clamd), started here as the tests start it: a temp directory, a one-line
signature database (EICAR, put together at run time), `Foreground yes`, 1100M limits and
`AlertExceedsMax yes`, ready when `zPING` answers `PONG`, stopped by its PID; FormGate names it in
`scanners: { clamd: { address: unix:..., timeout: 60s, max_bytes: 1100MiB, connections: 4 } }`
(the route without `scan` has the same `scanners:`). Every measurement gets a fresh clamd:
clamd caches the hashes of files it found clean (libclamav's cache, on by default) and answers
the same bytes again from that cache, an MD5 and a lookup instead of a scan (about a quarter
of the CPU here), and real uploads are new files. clamd spools a stream to a temp file and
scans it when it ends, so a scanned upload ends when clamd has scanned the whole file; FormGate's
`timeout` (60 s) bounds that wait. The first clamd must find the test signature in a small
stream, and FormGate's /metrics (an admin listener on loopback) must count one clean scan per
scanned upload and none without `scan`.

Strip: a JPEG of about BENCH_STRIP_MIB (64) MiB, made once into .build/bench/ by
scripts/make-image-fixtures.py's own `jpeg()` (quality 95; GPS EXIF with Orientation and a
thumbnail, XMP, IPTC, a comment) from a seeded noise image 8192 pixels wide and as high as that
size needs, so the strip transform walks 64 MiB of entropy-coded data. BENCH_STRIP_UPLOADS (16)
POSTs of it per measurement (1 GiB) on one keep-alive connection, each body sent with
sendfile(2), through the rules route with `multipart.strip_metadata: true` against the rules
route; BENCH_REPEATS rounds alternating, medians. The Go sink verifies its seeded payloads only,
so these go to an upstream of this script's own (`--upstream`, a process of its own): it reads
each whole request (FormGate sends it chunked), finds the multipart body's file part and compares
it with the original (memcmp): each upload must arrive as one whole request with the rules
applied (`file`, file-<uuid>.jpg, `via`), the file as long as the original (blank mode), equal to
it through the rules route, different through the strip route but equal after its first MiB
(the metadata segments come before the image data); the strip route's last file must decode with
Pillow to the original's pixels and carry no GPS EXIF (piexif), XMP, IPTC or comment text, and
/metrics must count what was stripped.

MB/s is file bytes over wall time; proxy CPU FormGate's utime + stime per GiB of file content
(clamd's beside it for the scan row); peak RSS FormGate's VmHWM.
"""
import http.client, importlib.util, io, json, os, re, shutil, socket, statistics, struct, subprocess, sys
import tempfile, threading, time

STRIP_MIB = int(os.environ.get("BENCH_STRIP_MIB", "64"))
STRIP_UPLOADS = int(os.environ.get("BENCH_STRIP_UPLOADS", "16"))
CLAMD = "/usr/sbin/clamd"
CLAMD_CHUNK = 1 << 20
# scripts/bench/payload: the body before the file's content (bench_tus.py's PREFIX).
BOUNDARY = "BenchBoundary-7MA4YWxkTrZu0gW-kq9"
PREFIX = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nbench\r\n--{BOUNDARY}\r\n"
          "Content-Disposition: form-data; name=\"upload\"; filename=\"bench.png\"\r\n"
          "Content-Type: image/png\r\n\r\n").encode()
JPEG_BOUNDARY = "BenchJPEGBoundary-q0LrX3v9"
# Where a JPEG's metadata ends, at the latest, in the strip row's file (its segments come before
# the image data; EXIF with its thumbnail, XMP, IPTC and the comment take a few KiB).
HEAD = 1 << 20


def eicar():
    """The EICAR test string, put together here so that no file of the tree holds it."""
    return ("X5O!P%@AP[4\\PZX54(P^)7CC)7}$" + "EICAR-STANDARD-" + "ANTIVIRUS-TEST-FILE!$H+H*").encode()


# --- clamd
class Clamd:
    """Debian's clamd on a Unix socket in a temp directory, a one-signature database, no freshclam."""

    def __init__(self, bench):
        self.directory = tempfile.mkdtemp(prefix="formgate-bench-clamd-")
        self.socket = os.path.join(self.directory, "clamd.sock")
        os.makedirs(os.path.join(self.directory, "db"))
        os.makedirs(os.path.join(self.directory, "tmp"))
        with open(os.path.join(self.directory, "db", "formgate-test.ndb"), "w") as database:
            database.write(f"FormGate.Test.EICAR:0:*:{eicar().hex()}\n")
        conf = os.path.join(self.directory, "clamd.conf")
        with open(conf, "w") as handle:
            handle.write(f"Foreground yes\nLocalSocket {self.socket}\nDatabaseDirectory {self.directory}/db\n"
                         f"TemporaryDirectory {self.directory}/tmp\nPidFile {self.directory}/clamd.pid\n"
                         f"LogFile {self.directory}/clamd.log\nStreamMaxLength 1100M\nMaxFileSize 1100M\n"
                         "MaxScanSize 1100M\nAlertExceedsMax yes\n" + ("User root\n" if os.getuid() == 0 else ""))
        self.process = bench.spawn([CLAMD, "-c", conf], "clamd.log")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.ping():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.02)
        log = open(os.path.join(self.directory, "clamd.log"), errors="replace").read()[-2000:]
        self.stop()
        raise bench.BenchFailure(f"clamd did not answer zPING (exit {self.process.poll()}): {log}")

    def connect(self):
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        connection.connect(self.socket)
        return connection

    def ping(self):
        try:
            with self.connect() as connection:
                connection.settimeout(2)
                connection.sendall(b"zPING\0")
                return connection.recv(16).startswith(b"PONG")
        except OSError:
            return False

    def instream(self, read, size):
        """A zINSTREAM of `size` bytes (read(offset, count) gives them) in CLAMD_CHUNK chunks; clamd's answer."""
        with self.connect() as connection:
            connection.settimeout(600)
            connection.sendall(b"zINSTREAM\0")
            offset = 0
            while offset < size:
                data = read(offset, min(CLAMD_CHUNK, size - offset))
                connection.sendall(struct.pack(">I", len(data)))
                connection.sendall(data)
                offset += len(data)
            connection.sendall(b"\0\0\0\0")
            reply = b""
            while not reply.endswith(b"\0"):
                chunk = connection.recv(4096)
                if not chunk:
                    break
                reply += chunk
        return reply.rstrip(b"\0").decode(errors="replace")

    def stop(self):
        """Stops clamd by its PID (SIGTERM, then SIGKILL) and removes its directory."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


# --- FormGate
def config(bench, name, port, sink_port, admin_port, scanner_socket=None, extra=""):
    """The rules route (bench.RULES) named `name`, with `extra` under its `multipart:`."""
    scanners = (f"scanners:\n  clamd: {{ address: unix:{scanner_socket}, timeout: 60s, max_bytes: 1100MiB, "
                "connections: 4 }\n") if scanner_socket else ""
    return (f"listen: 127.0.0.1:{port}\nworkers: {bench.cores}\nupstream: http://127.0.0.1:{sink_port}\n"
            f"admin: 127.0.0.1:{admin_port}\naccess_log: off\nlimits: {{ body_bytes: 64GiB, file_bytes: 64GiB }}\n"
            + scanners + f"routes:\n  - name: {name}\n    match: {{ path: /upload }}\n" + bench.RULES + extra)


def metrics(admin_port):
    """formgate_scan_total and formgate_stripped_total from the admin listener: {(family, route, value): n}."""
    connection = http.client.HTTPConnection("127.0.0.1", admin_port, timeout=30)
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    connection.close()
    found = {}
    for match in re.finditer(r'^formgate_(scan|stripped)_total\{route="([^"]*)",(?:result|kind)="([^"]*)"\} (\d+)$',
                             text, re.M):
        found[(match.group(1), match.group(2), match.group(3))] = int(match.group(4))
    return found


class Proxy:
    """A fresh FormGate process with one config; CPU and peak RSS read from /proc."""

    def __init__(self, bench, name, sink_port, **kwargs):
        self.bench, self.name = bench, name
        self.port, self.admin = bench.free_port(), bench.free_port()
        path = os.path.join(bench.work, f"inspection-{name}.yaml")
        open(path, "w").write(config(bench, name, self.port, sink_port, self.admin, **kwargs))
        self.process = bench.spawn([bench.binary, "run", "-c", path], f"inspection-{name}.log")
        try:
            bench.wait_for(self.port, self.process)
            bench.wait_for(self.admin, self.process)
        except bench.BenchFailure:
            bench.stop(self.process)
            raise

    def cpu(self):
        return self.bench.cpu_seconds(self.process.pid)

    def finish(self):
        """(peak RSS MiB, metrics), then the process stopped."""
        try:
            return self.bench.peak_rss_mib(self.process.pid), metrics(self.admin)
        finally:
            self.bench.stop(self.process)


# --- the scan row
def scan_once(bench, name, sink_port, case, clamd, scanned):
    """One verified 1 GiB upload (the Go generator, mode rules) through the rules route, scanned or not."""
    proxy = Proxy(bench, name, sink_port, scanner_socket=clamd.socket,
                  extra="      scan: { clamd: default }\n" if scanned else "")
    try:
        before, cpu0, clamd0 = bench.sink_stats(sink_port), proxy.cpu(), bench.cpu_seconds(clamd.process.pid)
        out = bench.load(proxy.port, "rules", **case)
        cpu1, clamd1 = proxy.cpu(), bench.cpu_seconds(clamd.process.pid)
        delta = bench.verify(f"inspection {name}", out, before, bench.sink_stats(sink_port))
    finally:
        rss, counted = proxy.finish()
    clean = counted.get(("scan", name, "clean"), 0)
    others = {key: value for key, value in counted.items() if key[0] == "scan" and key[2] != "clean"}
    if (clean != out["ok"] if scanned else clean) or others:
        raise bench.BenchFailure(f"VERIFICATION FAILED for inspection {name}: /metrics counted scans {counted} "
                                 f"for {out['ok']} uploads {'with' if scanned else 'without'} scan")
    gib = out["file_bytes"] / (1 << 30)
    return dict(value=out["file_bytes"] / out["seconds"] / 1e6, proxy=(cpu1 - cpu0) / gib,
                clamd=(clamd1 - clamd0) / gib, rss=rss, verified=delta["verified"], bytes=delta["file_bytes"])


def clamd_alone(bench, clamd, body_path, size):
    """The same file content as one zINSTREAM straight to clamd: MB/s and clamd's CPU per GiB."""
    with open(body_path, "rb") as body:
        read = lambda offset, count: os.pread(body.fileno(), count, len(PREFIX) + offset)
        cpu0, began = bench.cpu_seconds(clamd.process.pid), time.monotonic()
        answer = clamd.instream(read, size)
        seconds, cpu1 = time.monotonic() - began, bench.cpu_seconds(clamd.process.pid)
    if answer != "stream: OK":
        raise bench.BenchFailure(f"clamd answered {answer!r} for the bench's 1 GiB file (expected 'stream: OK')")
    return dict(value=size / seconds / 1e6, clamd=(cpu1 - cpu0) / (size / (1 << 30)))


def check_clamd_detects(bench, clamd):
    """clamd finds the test signature (a scan that finds nothing proves nothing)."""
    data = b"\0" * 4096 + eicar() + b"\0" * 4096
    answer = clamd.instream(lambda offset, count: data[offset:offset + count], len(data))
    if "FormGate.Test.EICAR" not in answer or "FOUND" not in answer:
        raise bench.BenchFailure(f"clamd did not find the test signature: {answer!r}")


def measure_scan(bench, sink_port, case):
    """Rounds of the rules route, the scanned route and clamd alone, each beside a clamd of its own:
    clamd caches the hashes of clean files (libclamav's cache, on by default) and answers a file it
    has already found clean without scanning it, so a second scan of the same bytes by the same
    clamd would measure an MD5 and a lookup (about 4 times less CPU here), not a scan."""
    body_path = bench.body_file(case["seed"], case["size"])
    samples = {"rules": [], "scan": [], "clamd": []}
    verified = [0, 0]
    for round_index in range(bench.repeats):
        order = ["rules", "scan", "clamd"] if round_index % 2 == 0 else ["clamd", "scan", "rules"]
        for which in order:
            clamd = Clamd(bench)
            try:
                if round_index == 0 and which == order[0]:
                    check_clamd_detects(bench, clamd)
                if which == "clamd":
                    sample = clamd_alone(bench, clamd, body_path, case["size"])
                else:
                    sample = scan_once(bench, which, sink_port, case, clamd, which == "scan")
                    verified[0] += sample["verified"]
                    verified[1] += sample["bytes"]
            finally:
                clamd.stop()
            samples[which].append(sample)
            print(f"bench: inspection round {round_index + 1} scan row {which:6} {sample['value']:,.0f} MB/s"
                  + (f", proxy CPU {sample['proxy']:.2f} s/GiB" if "proxy" in sample else "")
                  + f", clamd CPU {sample['clamd']:.2f} s/GiB"
                  + (f", RSS {sample['rss']:.1f} MiB" if "rss" in sample else ""), flush=True)
    return {which: medians(values) for which, values in samples.items()}, verified


# --- the strip row
def make_jpeg(bench, target_mib):
    """A JPEG of about target_mib MiB with GPS EXIF, XMP, IPTC and a comment (make-image-fixtures.py's
    jpeg()), from seeded noise; made once per size into .build/bench/."""
    path = os.path.join(bench.tools, f"strip-{target_mib}mib.jpg")
    if os.path.exists(path):
        return path
    spec = importlib.util.spec_from_file_location("make_image_fixtures",
                                                  os.path.join(bench.root, "scripts/make-image-fixtures.py"))
    fixtures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fixtures)
    from PIL import Image
    import random
    width = 8192
    # Bytes per row of this noise at quality 95, from a strip of 256 rows; then the height.
    probe = io.BytesIO()
    Image.frombytes("RGB", (width, 256), random.Random(7).randbytes(width * 256 * 3)).save(probe, "JPEG", quality=95)
    height = min(65000, max(16, int((target_mib << 20) / (len(probe.getvalue()) / 256))))
    image = Image.frombytes("RGB", (width, height), random.Random(30).randbytes(width * height * 3))
    fixtures.jpeg(image, path + ".part")
    os.replace(path + ".part", path)
    return path


def upload_body(path, original):
    """The strip row's request body (a title field, then the JPEG as "upload"), beside the JPEG."""
    body_path = path + ".body"
    with open(body_path + ".part", "wb") as body:
        body.write((f"--{JPEG_BOUNDARY}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nbench\r\n"
                    f"--{JPEG_BOUNDARY}\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"photo.jpg\"\r\n"
                    "Content-Type: image/jpeg\r\n\r\n").encode() + original + f"\r\n--{JPEG_BOUNDARY}--\r\n".encode())
    os.replace(body_path + ".part", body_path)
    return body_path


class Upstream:
    """The strip row's upstream: a small HTTP/1.1 server that reads each whole request (Content-Length
    or chunked), finds the file part of its multipart body and records it; answers 200 "ok"."""

    def __init__(self, original):
        self.original = open(original, "rb").read()
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.records, self.last_file, self.lock = [], None, threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(connection,), daemon=True).start()

    def serve(self, connection):
        """One connection's requests, each body read into one buffer the connection keeps (a fresh
        64 MiB object per request would cost its page faults every time)."""
        reader = connection.makefile("rb", buffering=1 << 20)
        body = bytearray()
        try:
            while True:
                line = reader.readline()
                if not line:
                    return
                headers = {}
                while True:
                    header = reader.readline()
                    if header in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = header.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                used = 0
                if "chunked" in headers.get("transfer-encoding", "").lower():
                    while True:
                        count = int(reader.readline().split(b";")[0], 16)
                        if count == 0:
                            while reader.readline() not in (b"\r\n", b"\n", b""):
                                pass
                            break
                        body = self.read_into(reader, body, used, count)
                        used += count
                        reader.read(2)
                else:
                    count = int(headers.get("content-length", "0"))
                    body = self.read_into(reader, body, 0, count)
                    used = count
                if line.startswith(b"GET /_bench/"):
                    answer = self.control(line.split()[1].decode())
                    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(answer) + answer)
                    continue
                self.record(line, headers, body, used)
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")
        except (OSError, ValueError) as error:
            with self.lock:
                self.records.append(dict(error=str(error)))
        finally:
            connection.close()

    def read_into(self, reader, body, at, count):
        """Reads `count` bytes into body[at:], growing it when it is too short; the buffer. (The last
        file, which /_bench/last answers, is the last request's: a later one may overwrite it.)"""
        if at + count > len(body):
            grown = bytearray(max(at + count, 2 * len(body)))
            grown[:at] = body[:at]
            body = grown
        with memoryview(body) as view:
            done = 0
            while done < count:
                got = reader.readinto(view[at + done:at + count])
                if not got:
                    raise ValueError(f"the request ended {count - done} bytes early")
                done += got
        return body

    def record(self, line, headers, body, used):
        """The request's file part, compared with the original (memcmp, no copies): equal, or equal
        after its first MiB (where the metadata is: blank mode leaves the entropy-coded data as it was)."""
        entry = dict(request=line.decode("latin-1").strip(), body=used)
        boundary = re.search(r'boundary="?([^";]+)"?', headers.get("content-type", ""))
        if boundary:
            delimiter = b"\r\n--" + boundary.group(1).encode()
            fields, at = {}, body.find(b"--" + boundary.group(1).encode(), 0, used)
            while at >= 0:
                head_end = body.find(b"\r\n\r\n", at, used)
                next_at = body.find(delimiter, head_end, used)
                if head_end < 0 or next_at < 0:
                    break
                head = body[at:head_end].decode("latin-1")
                name = re.search(r'name="([^"]*)"', head)
                filename = re.search(r'filename="([^"]*)"', head)
                start, end = head_end + 4, next_at
                if filename:
                    original, size = self.original, end - start
                    with memoryview(body) as view:
                        same = size == len(original) and original.startswith(view[start:end])
                        tail = size == len(original) and original.startswith(view[start + HEAD:end], HEAD)
                    entry.update(field=name and name.group(1), filename=filename.group(1), file=size, same=same,
                                 same_after_head=tail)
                    with self.lock:
                        self.last_file = (body, start, end)
                elif name:
                    fields[name.group(1)] = body[start:end].decode(errors="replace")
                at = next_at + 2
                if body.startswith(b"--", next_at + len(delimiter)):
                    entry["closed"] = True
                    break
            entry["fields"] = fields
        with self.lock:
            self.records.append(entry)

    def control(self, path):
        """/_bench/records: the records since the last call (JSON); /_bench/last: the last file's bytes."""
        with self.lock:
            if path == "/_bench/last":
                return bytes(self.last_file[0][self.last_file[1]:self.last_file[2]]) if self.last_file else b""
            records, self.records = self.records, []
        return json.dumps(records).encode()


class UpstreamProcess:
    """The Upstream in a process of its own (`bench_inspection.py --upstream`), so that it shares no
    interpreter lock with the client; asked for its records over HTTP, as the Go sink is."""

    def __init__(self, bench, original):
        self.bench = bench
        self.process = bench.spawn([sys.executable, os.path.abspath(__file__), "--upstream", original],
                                   "inspection-upstream.log", stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline().strip()
        if not line:
            raise bench.BenchFailure(f"the strip row's upstream did not start (see {bench.work}/inspection-upstream.log)")
        self.port = int(line)

    def get(self, path):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        connection.request("GET", path)
        data = connection.getresponse().read()
        connection.close()
        return data

    def take(self):
        return json.loads(self.get("/_bench/records"))

    def last_file(self):
        return self.get("/_bench/last")

    def close(self):
        self.bench.stop(self.process)


def post_jpegs(port, body_path, uploads):
    """`uploads` POSTs of the body file on one keep-alive connection, each body sent with sendfile(2)
    (so the client costs little CPU): seconds, [(status, answer)]."""
    size = os.path.getsize(body_path)
    head = (f"POST /upload HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: multipart/form-data; "
            f"boundary={JPEG_BOUNDARY}\r\nContent-Length: {size}\r\n\r\n").encode()
    statuses = []
    with socket.create_connection(("127.0.0.1", port), timeout=600) as connection, open(body_path, "rb") as body:
        reader = connection.makefile("rb")
        began = time.monotonic()
        for _ in range(uploads):
            connection.sendall(head)
            connection.sendfile(body, 0, size)
            status = reader.readline().split(b" ", 2)
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b"\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            statuses.append((int(status[1]) if len(status) > 1 else 0, reader.read(length)[:200]))
        seconds = time.monotonic() - began
    return seconds, statuses


def strip_once(bench, name, upstream, body_path, original, stripped):
    size = len(original)
    proxy = Proxy(bench, name, upstream.port, extra="      strip_metadata: true\n" if stripped else "")
    try:
        upstream.take()
        cpu0 = proxy.cpu()
        seconds, statuses = post_jpegs(proxy.port, body_path, STRIP_UPLOADS)
        cpu1 = proxy.cpu()
        records = upstream.take()
        received = upstream.last_file() if stripped else None
    finally:
        rss, counted = proxy.finish()
    problems = [f"answered {status}: {answer!r}" for status, answer in statuses if status != 200 or answer != b"ok\n"]
    if len(records) != STRIP_UPLOADS:
        problems.append(f"the upstream got {len(records)} requests for {STRIP_UPLOADS} uploads: {records[:3]}")
    for record in records:
        if record.get("file") != size or not record.get("closed"):
            problems.append(f"the upstream got a file of {record.get('file')} bytes (the original: {size}), "
                            f"closing delimiter {'seen' if record.get('closed') else 'missing'}: "
                            f"{ {k: v for k, v in record.items() if k != 'fields'} }")
        elif record["same"] == stripped or not record["same_after_head"]:
            problems.append("the file arrived " + ("changed after its first MiB" if not record["same_after_head"] else
                                                   "unchanged through the strip route" if stripped else
                                                   "changed through the rules route"))
        elif record.get("field") != "file" or not re.fullmatch(r"file-[0-9a-f-]{36}\.jpg", record["filename"]) \
                or record["fields"] != {"title": "bench", "via": "formgate"}:
            problems.append(f"the rules were not applied: {record.get('field')} {record.get('filename')} "
                            f"{record['fields']}")
    kinds = {key[2]: value for key, value in counted.items() if key[0] == "stripped" and key[1] == name}
    if stripped and not kinds:
        problems.append(f"/metrics counted nothing stripped: {counted}")
    if not stripped and kinds:
        problems.append(f"/metrics counted stripped kinds on the route without strip_metadata: {kinds}")
    if problems:
        raise bench.BenchFailure(f"VERIFICATION FAILED for inspection {name}:\n  " + "\n  ".join(problems[:5]))
    total = size * STRIP_UPLOADS
    return dict(value=total / seconds / 1e6, proxy=(cpu1 - cpu0) / (total / (1 << 30)), rss=rss, kinds=kinds,
                received=received)


def check_stripped(bench, original, received):
    """The stripped file: the original's pixels (Pillow), no GPS EXIF (piexif), no XMP, IPTC or comment text."""
    from PIL import Image
    import piexif
    problems = []
    with Image.open(io.BytesIO(original)) as a, Image.open(io.BytesIO(received)) as b:
        if a.size != b.size or a.mode != b.mode or a.tobytes() != b.tobytes():
            problems.append(f"decodes to other pixels ({b.mode} {b.size} against {a.mode} {a.size})")
        exif = b.info.get("exif")
    if exif and piexif.load(exif).get("GPS"):
        problems.append("still carries GPS EXIF")
    if not piexif.load(original).get("GPS"):
        problems.append("the original carries no GPS EXIF (the fixture is wrong)")
    head = received[:1 << 20]
    for text in (b"Jane Photographer", b"taken at home", b"http://ns.adobe.com/xap/1.0/", b"Photoshop 3.0"):
        if text in head:
            problems.append(f"still holds {text.decode()!r}")
    if problems:
        raise bench.BenchFailure("VERIFICATION FAILED for inspection strip: the stripped JPEG " + "; ".join(problems))


def measure_strip(bench):
    path = make_jpeg(bench, STRIP_MIB)
    original = open(path, "rb").read()
    body_path = upload_body(path, original)
    upstream = UpstreamProcess(bench, path)
    samples, received = {"rules": [], "strip": []}, None
    try:
        for round_index in range(bench.repeats):
            order = ["rules", "strip"] if round_index % 2 == 0 else ["strip", "rules"]
            for which in order:
                sample = strip_once(bench, which, upstream, body_path, original, which == "strip")
                received = sample.pop("received") or received
                samples[which].append(sample)
                print(f"bench: inspection round {round_index + 1} strip row {which:6} {sample['value']:,.0f} MB/s, "
                      f"proxy CPU {sample['proxy']:.2f} s/GiB, RSS {sample['rss']:.1f} MiB", flush=True)
    finally:
        upstream.close()
    # The strip route's last upload, as the upstream received it.
    check_stripped(bench, original, received)
    kinds = samples["strip"][-1]["kinds"]
    result = {which: medians(values) for which, values in samples.items()}
    result.update(size=len(original), kinds=sorted(kinds), dimensions=jpeg_size(original))
    return result


def jpeg_size(data):
    from PIL import Image
    with Image.open(io.BytesIO(data)) as image:
        return image.size


# --- both rows
def medians(samples):
    return {key: statistics.median(sample[key] for sample in samples) for key in samples[0]
            if isinstance(samples[0][key], (int, float))}


def measure(bench, sink_port, case):
    """Both rows; `case` is the 1 × 1 GiB case's (size, seed). The sink's verified requests are returned
    too, for the run's total."""
    scan, verified = measure_scan(bench, sink_port, dict(conns=1, size=case["size"], seed=case["seed"]))
    strip = measure_strip(bench)
    version = subprocess.run([CLAMD, "--version"], capture_output=True, text=True).stdout.strip()
    return dict(scan=scan, strip=strip, size=case["size"], verified=verified,
                clamd_version=version.split("/")[0] or "clamd")


def lines(result, size_label):
    """The docs' and README's lines for both rows."""
    if not result:
        return []
    scan, strip = result["scan"], result["strip"]
    rules, scanned, alone = scan["rules"], scan["scan"], scan["clamd"]
    text = [f"**Inspection** (`scripts/bench_inspection.py`; medians of the rounds, routes alternating; each "
            "ratio is to the same route without the step, measured beside it):", "",
            "| row | MB/s | × without | proxy CPU s/GiB | clamd CPU s/GiB | peak RSS MiB |",
            "|---|---:|---:|---:|---:|---:|",
            f"| 1 × {size_label}, rules route | {rules['value']:,.0f} | 1.00× | {rules['proxy']:.2f} | — | "
            f"{rules['rss']:.1f} |",
            f"| 1 × {size_label}, rules + `scan: {{ clamd: default }}` | {scanned['value']:,.0f} | "
            f"{scanned['value'] / rules['value']:.2f}× | {scanned['proxy']:.2f} | {scanned['clamd']:.2f} | "
            f"{scanned['rss']:.1f} |",
            f"| 1 × {size_label}, clamd alone (`zINSTREAM`, no proxy) | {alone['value']:,.0f} | — | — | "
            f"{alone['clamd']:.2f} | — |"]
    srules, stripped = strip["rules"], strip["strip"]
    label = f"{STRIP_UPLOADS} × {strip['size'] / (1 << 20):.0f} MiB JPEG"
    text += [f"| {label}, rules route | {srules['value']:,.0f} | 1.00× | {srules['proxy']:.2f} | — | "
             f"{srules['rss']:.1f} |",
             f"| {label}, rules + `strip_metadata: true` | {stripped['value']:,.0f} | "
             f"{stripped['value'] / srules['value']:.2f}× | {stripped['proxy']:.2f} | — | {stripped['rss']:.1f} |", "",
             f"Scan: the 1 × {size_label} case's upload (verified by the sink byte for byte) beside Debian's "
             f"clamd ({result['clamd_version']}; started by the bench: a one-signature database, a Unix socket; a fresh clamd for each "
             "measurement, since clamd answers bytes it already found clean from its cache; FormGate's pool: 4 "
             "connections per worker), every scanned upload counted clean in `/metrics`; clamd alone is one "
             f"`zINSTREAM` of the same file content in 1 MiB chunks, no proxy. The scanned route runs at "
             f"{scanned['value'] / alone['value']:.2f}× clamd's own throughput: clamd spools the stream and scans "
             "it when it ends, and the upload's last bytes wait for that verdict. Strip: a "
             f"{strip['dimensions'][0]} × {strip['dimensions'][1]} noise JPEG at quality 95 "
             f"({strip['size']:,} bytes: GPS EXIF, XMP, IPTC, a comment, then the entropy-coded data), posted "
             f"{STRIP_UPLOADS} times per measurement to an upstream of the script's own (the Go sink verifies its "
             "seeded payloads only): every upload arrived as one whole request with the rules applied, the file as "
             "long as the original (blank mode), equal to it through the rules route and after its first MiB "
             "through the strip route; the stripped file decodes with Pillow to the original's pixels, without "
             f"GPS, XMP, IPTC or comment (stripped: {', '.join(strip['kinds'])}).", ""]
    return text


def serve_upstream(original):
    """`--upstream ORIGINAL`: the strip row's upstream; prints its port, serves until stopped."""
    upstream = Upstream(original)
    print(upstream.port, flush=True)
    threading.Event().wait()


def main():
    """The inspection rows alone: the Go tools and the sink as bench.py builds and starts them."""
    if sys.argv[1:2] == ["--upstream"]:
        return serve_upstream(sys.argv[2])
    sys.argv[1:] = []
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench
    os.makedirs(bench.work, exist_ok=True)
    if not os.path.exists(bench.binary):
        sys.exit(f"bench_inspection: no FormGate binary at {bench.binary} (make release)")
    try:
        bench.build_tools()
        sink, sink_port = bench.spawn_go([os.path.join(bench.tools, "sink")], "sink.log")
        case = bench.case_table()["1x"][1]
        result = measure(bench, sink_port, case)
        print("\n" + "\n".join(lines(result, bench.mib(bench.large_mib))))
        print("bench_inspection: the inspection rows alone: docs left alone.")
    except bench.BenchFailure as failure:
        print(f"\nbench_inspection: FAILED\n{failure}", file=sys.stderr)
        sys.exit(1)
    finally:
        for each in bench.processes:
            bench.stop(each)


if __name__ == "__main__":
    main()
