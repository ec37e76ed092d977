#!/usr/bin/env python3
"""The live view and tracing rows of `make bench` (issue 32): scripts/bench.py calls `measure` and `lines`.

Alone, without the rest of the bench: `scripts/bench_live.py` (with the release build in place;
it builds the Go tools and starts the sink as bench.py does, prints the rows and leaves the docs
alone). bench.py runs it after the shared rate-limit row unless BENCH_LIVE=0. BENCH_LIVE_PARTS
("live uploads tracing", all three by default) picks parts when run alone; BENCH_LIVE_UPLOADS
(1000) is the second part's count of uploads held open.

Every FormGate here is the release build with one worker per core and an admin listener that
needs a token: `admin: { listen: 127.0.0.1:PORT, token_file: FILE }`, FILE a temp file holding
32 random hex characters (removed at the end), every admin request carrying
`Authorization: Bearer TOKEN`.

1. Live view cost. The 4 KiB case's uploads (the Go generator, mode rules, 64 keep-alive
   connections, seed 10000, BENCH_SMALL_SECONDS each) through the rules route (bench.RULES) of
   one FormGate, measured without a reader of `GET /uploads/events` and with one: a thread of
   this process that opens the stream before the generator starts, reads it continuously (recv
   as fast as it comes, never stalling) and counts bytes and events by kind until after the
   generator's last answer. The run fails if the reader got no event or no byte, or if FormGate
   closed its stream during the measurement (a reader that falls 1 MiB behind is dropped).
   BENCH_REPEATS rounds after a 1 s warm-up of each, the order reversed every other round;
   medians of req/s and of FormGate's CPU (utime + stime from /proc) per request. Target: with
   the reader, 0.95 × the requests per second without it or more (printed, not enforced).

2. `GET /uploads` under BENCH_LIVE_UPLOADS concurrent uploads. A FormGate with
   `limits: { connections: 4000 }` and `timeouts: { idle: 120s }` in front of a holding upstream
   (a thread of this process that accepts FormGate's connections and reads and discards what
   comes, never answering; the sink is not used, its counters stay as they were). This process
   raises its RLIMIT_NOFILE (soft, and the hard one if need be: the bench runs as root) before
   starting FormGate, which inherits it, and checks FormGate's log says it serves 4000
   connections, not fewer. BENCH_LIVE_UPLOADS raw sockets each send a multipart head and 8 KiB of
   a file part declared 1 GiB (Content-Length), then 16 more bytes every 10 s, so none is idle
   for long. Once `GET /uploads` lists them all in `in_flight` (the workers refresh their records
   every 250 ms), 20 `GET /uploads` one after another, each on a new connection, each timed from
   connect to the last byte of its answer (its Content-Length); median and max in ms (target:
   100 ms or less, printed, not enforced) and the answer's size. Each answer must be 200 and
   list every held upload, the holding upstream must have accepted one connection per upload,
   and no held socket may have been answered or closed by FormGate (that would be a timeout or a
   refusal), else the run fails. Then the uploads are closed.

3. Tracing cost. The 4 KiB case again, through a fresh FormGate per measurement (so that no
   exporter backlog carries over), with no `tracing:` key, and with
   `tracing: { otlp: http://127.0.0.1:PORT/v1/traces, sample: 1 }` against (a) a receiver that
   answers 200 at once, (b) a port nothing listens on, (c) a receiver that sleeps 2 s before
   each 200. The receivers are Python http.servers of this process (threaded, keep-alive) that
   read each POST's body, hand it to a thread that parses its JSON and counts
   its spans (resourceSpans[].scopeSpans[].spans), and answer, so parsing never delays an answer. Each
   measurement: a 1 s warm-up, BENCH_SMALL_SECONDS measured, then 1 s for the exporter's batches
   in flight before FormGate's `/metrics` is read. Every config of this part has
   `timeouts: { drain: 5s }`: stopped by SIGTERM, FormGate gives its exporter what is left of the
   drain to send what it holds, and against a receiver down or slow it takes all of it (with the
   default 30 s, longer than bench.stop waits before SIGKILL). Reported: req/s, proxy CPU µs per request,
   the ratios to tracing off, `formgate_trace_spans_exported_total` and
   `formgate_trace_spans_dropped_total` over the window (from the metrics read before the
   window to the one 1 s after it; "n/a" while FormGate does not write them) and the spans the
   receiver counted over the same span of time. When the counters exist, (a) must show spans
   exported and (b) spans dropped, else the run fails. BENCH_REPEATS rounds, the order of the
   four reversed every other round; medians.

Every request of every measured case (and of the warm-ups) is verified by the sink: status 200
for each, the rules applied, every file byte (bench.verify). Processes are started and stopped
by their PIDs (bench.spawn, bench.stop).
"""
import http.client, http.server, json, os, queue, re, resource, secrets, select, selectors, shutil, socket, statistics, \
    sys, tempfile, threading, time

# The second part's FormGate: connections it may serve (limits.connections), and how long a
# held upload may be silent (timeouts.idle, default 60 s).
CONNECTIONS = 4000
IDLE = "120s"
HELD = int(os.environ.get("BENCH_LIVE_UPLOADS", "1000"))
GETS = 20
TARGET_RATIO = 0.95
TARGET_MS = 100.0
SLOW_SECONDS = 2.0
# The third part's `timeouts.drain` (default 30 s): on SIGTERM the exporter gets what is left of
# it to send its queue, and against a receiver that is down or slow it takes all of it.
DRAIN = "5s"
PARTS = ("live", "uploads", "tracing")
VIEWS = ("without", "with")
VIEW_LABELS = {"without": "no reader", "with": "one reader of `/uploads/events`"}
TRACINGS = ("off", "fast", "down", "slow", "down10")
TRACING_LABELS = {"off": "`tracing:` off", "fast": "receiver answering 200 at once",
                  "down": "receiver down (nothing listens)", "slow": f"slow receiver ({SLOW_SECONDS:.0f} s per 200)",
                  "down10": "receiver down, `sample: 0.1`"}
# The sampling ratio of each variant (the rest sample every request).
SAMPLES = {"down10": "0.1"}
EXPORTED = "formgate_trace_spans_exported_total"
DROPPED = "formgate_trace_spans_dropped_total"


# --- the admin listener
class Admin:
    """The admin token in a temp file of its own, and requests to the admin listener."""

    def __init__(self):
        self.token = secrets.token_hex(16)  # 32 hex characters
        self.directory = tempfile.mkdtemp(prefix="formgate-bench-live-")
        self.path = os.path.join(self.directory, "admin-token")
        with open(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as handle:
            handle.write(self.token + "\n")

    def yaml(self, port):
        return f"admin: {{ listen: 127.0.0.1:{port}, token_file: {self.path} }}\n"

    def header(self):
        return f"Authorization: Bearer {self.token}"

    def get(self, port, path, timeout=30):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        try:
            connection.request("GET", path, headers={"Authorization": f"Bearer {self.token}"})
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def remove(self):
        shutil.rmtree(self.directory, ignore_errors=True)


def config(bench, port, sink_port, admin_port, admin, extra=""):
    """One FormGate, the rules route at /upload (as bench.py's rules candidate), the admin
    listener with its token, and `extra` top-level keys."""
    return (f"listen: 127.0.0.1:{port}\nworkers: {bench.cores}\nupstream: http://127.0.0.1:{sink_port}\n"
            + admin.yaml(admin_port) + "access_log: off\nlimits: { body_bytes: 64GiB, file_bytes: 64GiB }\n" + extra
            + "routes:\n  - name: rules\n    match: { path: /upload }\n" + bench.RULES)


def start_formgate(bench, name, text, port, admin_port):
    path = os.path.join(bench.work, f"{name}.yaml")
    open(path, "w").write(text)
    process = bench.spawn([bench.binary, "run", "-c", path], f"{name}.log")
    bench.wait_for(port, process)
    bench.wait_for(admin_port, process)
    return process


def medians(samples):
    return {key: statistics.median(sample[key] for sample in samples) for key in samples[0]
            if isinstance(samples[0][key], (int, float)) and not isinstance(samples[0][key], bool)}


def load_once(bench, port, sink_port, process, case, label):
    """One run of the generator through `port`, verified by the sink: the figures."""
    before, cpu0 = bench.sink_stats(sink_port), bench.cpu_seconds(process.pid)
    out = bench.load(port, "rules", **case, path="/upload")
    cpu1 = bench.cpu_seconds(process.pid)
    delta = bench.verify(label, out, before, bench.sink_stats(sink_port))
    requests = out["ok"]
    return dict(value=requests / out["seconds"], p50=out["p50_ms"], p99=out["p99_ms"],
                proxy=(cpu1 - cpu0) / requests * 1e6, requests=requests,
                verified=delta["verified"], bytes=delta["file_bytes"])


# --- 1. the live view's cost
class EventReader(threading.Thread):
    """One reader of `GET /uploads/events`: reads as fast as the stream comes, counts bytes and
    events by kind; `stop()` ends it and tells whether FormGate kept the stream open."""

    KINDS = (b"snapshot", b"upload", b"finished", b"gone")

    def __init__(self, admin, port):
        super().__init__(daemon=True)
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.sock.sendall(f"GET /uploads/events HTTP/1.1\r\nHost: formgate-admin\r\n{admin.header()}\r\n"
                          "Accept: text/event-stream\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError(f"the admin listener closed /uploads/events before its head: {head[:200]!r}")
            head += chunk
        head, self.rest = head.split(b"\r\n\r\n", 1)
        self.status = head.split(b"\r\n", 1)[0].decode(errors="replace")
        if " 200 " not in self.status + " ":
            raise OSError(f"/uploads/events answered {self.status!r}")
        self.sock.settimeout(0.2)
        self.bytes = len(self.rest)
        self.kinds = {kind.decode(): 0 for kind in self.KINDS}
        self.comments = 0
        self.closed_by_server = False
        self.stopping = False
        self.cpu = 0.0

    def count(self, text):
        for kind in self.KINDS:
            self.kinds[kind.decode()] += text.count(b"event: " + kind + b"\n")
        self.comments += text.count(b"\n: ") + text.startswith(b": ")

    def run(self):
        began = time.thread_time()
        pending = self.rest
        while not self.stopping:
            try:
                chunk = self.sock.recv(1 << 20)
            except socket.timeout:
                continue
            except OSError:
                self.closed_by_server = not self.stopping
                break
            if not chunk:
                self.closed_by_server = not self.stopping
                break
            self.bytes += len(chunk)
            pending += chunk
            cut = pending.rfind(b"\n")
            if cut >= 0:  # whole lines only: an event's name is never cut in two
                self.count(b"\n" + pending[:cut + 1])
                pending = pending[cut + 1:]
        self.cpu = time.thread_time() - began

    @property
    def events(self):
        return sum(self.kinds.values())

    def stop(self):
        self.stopping = True
        self.join(10)
        self.sock.close()


def live_once(bench, view, port, admin_port, admin, sink_port, process, case, label):
    reader = None
    if view == "with":
        reader = EventReader(admin, admin_port)
        reader.start()
        time.sleep(0.2)  # the snapshot event read: the stream is flowing before the window
    try:
        sample = load_once(bench, port, sink_port, process, case, f"live view, {label}")
    finally:
        if reader:
            time.sleep(0.6)  # one more tick of the feed (500 ms): the window's last events
            reader.stop()
    if reader:
        problems = []
        if reader.closed_by_server:
            problems.append("FormGate closed the reader's stream during the measurement (a reader that falls "
                            "1 MiB behind is dropped)")
        if reader.events == 0 or reader.bytes == 0:
            problems.append(f"the reader got {reader.events} events and {reader.bytes} bytes")
        if problems:
            raise bench.BenchFailure(f"VERIFICATION FAILED for live view, {label}:\n  " + "\n  ".join(problems))
        sample.update(events=reader.events, event_bytes=reader.bytes, finished=reader.kinds["finished"],
                      upload=reader.kinds["upload"], gone=reader.kinds["gone"],
                      reader_cpu=reader.cpu / sample["requests"] * 1e6)
    return sample


def measure_live(bench, sink_port, case, admin, verified):
    port, admin_port = bench.free_port(), bench.free_port()
    process = start_formgate(bench, "live", config(bench, port, sink_port, admin_port, admin), port, admin_port)
    samples = {view: [] for view in VIEWS}
    try:
        for view in VIEWS:  # warm-up: connections to the sink, the feed's first readers
            sample = live_once(bench, view, port, admin_port, admin, sink_port, process, dict(case, duration="1s"),
                               f"{view} reader (warm-up)")
            verified[0] += sample["verified"]
            verified[1] += sample["bytes"]
        for round_index in range(bench.repeats):
            order = VIEWS if round_index % 2 == 0 else tuple(reversed(VIEWS))
            for view in order:
                sample = live_once(bench, view, port, admin_port, admin, sink_port, process, case, f"{view} reader")
                verified[0] += sample["verified"]
                verified[1] += sample["bytes"]
                samples[view].append(sample)
                read = (f", reader: {sample['events']:,} events ({sample['finished']:,} finished, "
                        f"{sample['upload']:,} upload, {sample['gone']:,} gone), {sample['event_bytes']:,} bytes, "
                        f"its CPU {sample['reader_cpu']:.1f} µs/req" if view == "with" else "")
                print(f"bench: live round {round_index + 1} {view:7} reader {sample['value']:,.0f} req/s p50 "
                      f"{sample['p50']:.2f} ms p99 {sample['p99']:.2f} ms, proxy CPU {sample['proxy']:.1f} µs/req"
                      + read, flush=True)
    finally:
        bench.stop(process)
    return {view: medians(values) for view, values in samples.items()} | dict(
        samples={view: [sample["value"] for sample in values] for view, values in samples.items()})


# --- 2. GET /uploads under many uploads
class HoldingUpstream(threading.Thread):
    """An upstream that accepts every connection and reads and discards what comes, never
    answering: FormGate's uploads stay in flight for as long as their clients hold them."""

    def __init__(self):
        super().__init__(daemon=True)
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(4096)
        self.listener.setblocking(False)
        self.port = self.listener.getsockname()[1]
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.accepted = 0
        self.open = 0
        self.bytes = 0
        self.stopping = False

    def run(self):
        while not self.stopping:
            for key, _ in self.selector.select(0.2):
                if key.fileobj is self.listener:
                    while True:
                        try:
                            connection, _ = self.listener.accept()
                        except (BlockingIOError, InterruptedError):
                            break
                        connection.setblocking(False)
                        self.selector.register(connection, selectors.EVENT_READ)
                        self.accepted += 1
                        self.open += 1
                    continue
                try:
                    data = key.fileobj.recv(1 << 16)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    data = b""
                if data:
                    self.bytes += len(data)
                else:
                    self.selector.unregister(key.fileobj)
                    key.fileobj.close()
                    self.open -= 1

    def stop(self):
        self.stopping = True
        self.join(10)
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()
        self.selector.close()


class HeldUploads(threading.Thread):
    """`count` uploads held open: a multipart head and 8 KiB of a file part declared 1 GiB, then
    16 more bytes on each every 10 s."""

    BOUNDARY = "BenchLiveHeld-4fTq9"
    DECLARED = 1 << 30

    def __init__(self, port, count):
        super().__init__(daemon=True)
        self.port, self.count = port, count
        self.sockets = []
        self.stopping = threading.Event()
        self.trickled = 0
        self.failures = []
        random_block = secrets.token_bytes(8192)
        for index in range(count):
            head = (f"--{self.BOUNDARY}\r\nContent-Disposition: form-data; name=\"upload\"; "
                    f"filename=\"held-{index}.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n").encode()
            request = (f"POST /upload HTTP/1.1\r\nHost: formgate\r\nContent-Type: multipart/form-data; "
                       f"boundary={self.BOUNDARY}\r\nContent-Length: {self.DECLARED}\r\n\r\n").encode()
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(request + head + random_block)
            sock.setblocking(False)
            self.sockets.append(sock)
            if index % 100 == 99:
                time.sleep(0.05)  # the accept queues keep up

    def run(self):
        while not self.stopping.wait(10):
            for sock in self.sockets:
                try:
                    sock.send(secrets.token_bytes(16))
                except BlockingIOError:
                    pass
                except OSError as error:
                    self.failures.append(str(error))
            self.trickled += 1

    def answered(self):
        """The held sockets FormGate answered or closed (readable: a response, or EOF)."""
        poller = select.poll()
        for sock in self.sockets:
            poller.register(sock, select.POLLIN | select.POLLERR | select.POLLHUP)
        return len(poller.poll(0))

    def close(self):
        self.stopping.set()
        self.join(15)
        for sock in self.sockets:
            sock.close()


def timed_get(admin, port):
    """One `GET /uploads` on a new connection: (milliseconds from connect to the answer's last
    byte, status, body)."""
    request = (f"GET /uploads HTTP/1.1\r\nHost: formgate-admin\r\n{admin.header()}\r\nConnection: close\r\n\r\n"
               ).encode()
    began = time.perf_counter()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request)
        data = b""
        length = None
        while True:
            if length is None and b"\r\n\r\n" in data:
                head = data.split(b"\r\n\r\n", 1)[0]
                match = re.search(rb"\r\ncontent-length:\s*(\d+)", head, re.I)
                length = len(head) + 4 + int(match.group(1)) if match else -1
            if length is not None and length >= 0 and len(data) >= length:
                break
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            data += chunk
    elapsed = (time.perf_counter() - began) * 1e3
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
    return elapsed, status, body


def raise_descriptors(needed):
    """Raises this process's RLIMIT_NOFILE (soft, and hard if need be: root) to `needed` at
    least; returns the limits before, to restore."""
    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    soft, hard = before
    if hard != resource.RLIM_INFINITY and hard < needed:
        hard = needed
    if soft != resource.RLIM_INFINITY and soft < hard:
        soft = hard
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return before


def measure_uploads(bench, admin):
    needed = CONNECTIONS * 3 + 4096  # FormGate: 3 descriptors per connection and its reserve
    limits_before = raise_descriptors(needed)
    upstream, held, process = HoldingUpstream(), None, None
    upstream.start()
    try:
        port, admin_port = bench.free_port(), bench.free_port()
        text = (f"listen: 127.0.0.1:{port}\nworkers: {bench.cores}\nupstream: http://127.0.0.1:{upstream.port}\n"
                + admin.yaml(admin_port) + "access_log: off\n"
                f"limits: {{ body_bytes: 64GiB, file_bytes: 64GiB, connections: {CONNECTIONS} }}\n"
                f"timeouts: {{ idle: {IDLE} }}\n"
                "routes:\n  - name: rules\n    match: { path: /upload }\n" + bench.RULES)
        process = start_formgate(bench, "live-uploads", text, port, admin_port)
        log = open(os.path.join(bench.work, "live-uploads.log"), errors="replace").read()
        served = re.findall(r"limits\.connections: (\d+) client connections", log)
        if "clamped" in log or not served or int(served[-1]) < CONNECTIONS:
            raise bench.BenchFailure(f"FormGate does not serve {CONNECTIONS} connections (see "
                                     f"{bench.work}/live-uploads.log): {served or 'no limits.connections line'}")
        began = time.monotonic()
        held = HeldUploads(port, HELD)
        held.start()
        opened = time.monotonic() - began
        listed, deadline = 0, time.monotonic() + 60
        while time.monotonic() < deadline:
            status, body = admin.get(admin_port, "/uploads")
            listed = len(json.loads(body)["in_flight"]) if status == 200 else -1
            if listed >= HELD:
                break
            time.sleep(0.25)
        waited = time.monotonic() - began
        if listed < HELD:
            raise bench.BenchFailure(f"VERIFICATION FAILED for /uploads: it listed {listed} of {HELD} uploads "
                                     f"in flight after {waited:.0f} s")
        timings, sizes, problems = [], [], []
        for _ in range(GETS):
            elapsed, status, body = timed_get(admin, admin_port)
            timings.append(elapsed)
            sizes.append(len(body))
            try:
                in_flight = len(json.loads(body)["in_flight"]) if status == 200 else None
            except ValueError:
                in_flight = None
            if status != 200 or in_flight is None or in_flight < HELD:
                problems.append(f"a GET /uploads answered {status} listing {in_flight} uploads in flight")
        answered = held.answered()
        if answered:
            problems.append(f"FormGate answered or closed {answered} of the {HELD} held uploads")
        if held.failures:
            problems.append(f"{len(held.failures)} trickles failed: {held.failures[:3]}")
        if upstream.accepted < HELD:
            problems.append(f"the holding upstream accepted {upstream.accepted} connections for {HELD} uploads")
        if problems:
            raise bench.BenchFailure("VERIFICATION FAILED for /uploads:\n  " + "\n  ".join(problems))
        held_seconds = time.monotonic() - began
        print(f"bench: live /uploads with {HELD:,} uploads in flight: median {statistics.median(timings):.1f} ms, max "
              f"{max(timings):.1f} ms, {statistics.median(sizes):,.0f} bytes (opened in {opened:.1f} s, all listed "
              f"after {waited:.1f} s, the upstream holding {upstream.open:,} connections)", flush=True)
        held.close()
        # The uploads leave the live view (the feed reads the boards every 500 ms).
        remaining, deadline = None, time.monotonic() + 15
        while time.monotonic() < deadline:
            status, body = admin.get(admin_port, "/uploads")
            remaining = len(json.loads(body)["in_flight"]) if status == 200 else None
            if remaining == 0:
                break
            time.sleep(0.25)
        print(f"bench: live /uploads after closing the uploads: {remaining} in flight", flush=True)
        held = None
        return dict(median=statistics.median(timings), max=max(timings), min=min(timings),
                    size=statistics.median(sizes), held=HELD, listed=listed, waited=waited, opened=opened,
                    held_seconds=held_seconds, timings=timings, remaining=remaining)
    finally:
        if held:
            held.close()
        if process:
            bench.stop(process)
        upstream.stop()
        resource.setrlimit(resource.RLIMIT_NOFILE, limits_before)


# --- 3. tracing's cost
class Receiver:
    """An OTLP/HTTP receiver on loopback (threaded, keep-alive): reads each POST's body, hands it
    to a thread of its own that counts the POSTs and the spans in their JSON (so that parsing
    never holds the answer back) and answers 200, after `delay` seconds."""

    def __init__(self, delay=0.0):
        self.lock = threading.Lock()
        self.posts = self.spans = self.bad = self.bytes = 0
        self.busy = 0.0  # seconds spent reading and answering POSTs
        self.bodies = queue.Queue()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                began = time.perf_counter()
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.bodies.put(body)  # counted before FormGate can count it exported
                if delay:
                    time.sleep(delay)
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")
                with receiver.lock:
                    receiver.busy += time.perf_counter() - began - delay

            def log_message(self, *arguments):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs=dict(poll_interval=0.2), daemon=True)
        self.thread.start()
        self.counter = threading.Thread(target=self.count, daemon=True)
        self.counter.start()

    def count(self):
        while (body := self.bodies.get()) is not None:
            try:
                document = json.loads(body)
                spans = sum(len(scope.get("spans", [])) for resource_spans in document.get("resourceSpans", [])
                            for scope in resource_spans.get("scopeSpans", []))
                bad = 0
            except (ValueError, AttributeError, TypeError):
                spans, bad = 0, 1
            with self.lock:
                self.posts += 1
                self.spans += spans
                self.bad += bad
                self.bytes += len(body)
            self.bodies.task_done()
        self.bodies.task_done()

    def counts(self):
        """What it counted of the POSTs answered so far."""
        self.bodies.join()
        with self.lock:
            return dict(posts=self.posts, spans=self.spans, bad=self.bad, bytes=self.bytes, busy=self.busy)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()
        self.bodies.put(None)
        self.counter.join(10)


def trace_counters(admin, admin_port):
    """FormGate's span counters from /metrics: {name: value}, without the ones it does not write."""
    status, body = admin.get(admin_port, "/metrics")
    if status != 200:
        raise OSError(f"/metrics answered {status}")
    found = {}
    for match in re.finditer(rf"^({EXPORTED}|{DROPPED}) (\S+)$", body.decode(errors="replace"), re.M):
        found[match.group(1)] = float(match.group(2))
    return found


def tracing_once(bench, variant, receivers, down_port, sink_port, admin, case):
    port, admin_port = bench.free_port(), bench.free_port()
    receiver = receivers.get(variant)
    target = receiver.port if receiver else down_port
    extra = f"timeouts: {{ drain: {DRAIN} }}\n" + ("" if variant == "off" else
                                                  f"tracing: {{ otlp: http://127.0.0.1:{target}/v1/traces, "
                                                  f"sample: {SAMPLES.get(variant, '1')} }}\n")
    process = start_formgate(bench, f"live-tracing-{variant}", config(bench, port, sink_port, admin_port, admin, extra),
                             port, admin_port)
    try:
        warm = load_once(bench, port, sink_port, process, dict(case, duration="1s"), f"tracing {variant} (warm-up)")
        counted0 = trace_counters(admin, admin_port)
        received0 = receiver.counts() if receiver else None
        sample = load_once(bench, port, sink_port, process, case, f"tracing {variant}")
        time.sleep(1.0)  # full batches the exporter is sending
        counted1 = trace_counters(admin, admin_port)
        received1 = receiver.counts() if receiver else None
    finally:
        stopping = time.monotonic()
        bench.stop(process)
        stopped = time.monotonic() - stopping
    for name, key in ((EXPORTED, "exported"), (DROPPED, "dropped")):
        sample[key] = counted1[name] - counted0.get(name, 0) if name in counted1 else None
    sample["received"] = received1["spans"] - received0["spans"] if receiver else None
    sample["posts"] = received1["posts"] - received0["posts"] if receiver else None
    sample["bad"] = received1["bad"] - received0["bad"] if receiver else 0
    sample["stop"] = stopped
    sample["killed"] = process.returncode == -9
    sample["post_bytes"] = (received1["bytes"] - received0["bytes"]) / sample["posts"] if sample["posts"] else None
    sample["busy"] = received1["busy"] - received0["busy"] if receiver else None
    sample["verified"] += warm["verified"]
    sample["bytes"] += warm["bytes"]
    problems = []
    if variant == "fast" and sample["exported"] is not None and not sample["exported"] > 0:
        problems.append(f"{EXPORTED} counted {sample['exported']:.0f} spans over the window with a receiver answering 200")
    if variant in ("down", "down10") and sample["dropped"] is not None and not sample["dropped"] > 0:
        problems.append(f"{DROPPED} counted {sample['dropped']:.0f} spans over the window with the receiver down")
    if sample["bad"]:
        problems.append(f"the receiver could not read {sample['bad']} POSTs as OTLP JSON")
    if problems:
        raise bench.BenchFailure(f"VERIFICATION FAILED for tracing {variant}:\n  " + "\n  ".join(problems))
    return sample


def measure_tracing(bench, sink_port, case, admin, verified):
    receivers = {"fast": Receiver(), "slow": Receiver(SLOW_SECONDS)}
    down_port = bench.free_port()  # nothing listens on it
    samples = {variant: [] for variant in TRACINGS}
    try:
        for round_index in range(bench.repeats):
            order = TRACINGS if round_index % 2 == 0 else tuple(reversed(TRACINGS))
            for variant in order:
                sample = tracing_once(bench, variant, receivers, down_port, sink_port, admin, case)
                verified[0] += sample["verified"]
                verified[1] += sample["bytes"]
                samples[variant].append(sample)
                shown = lambda key: "n/a" if sample[key] is None else f"{sample[key]:,.0f}"
                print(f"bench: tracing round {round_index + 1} {variant:4} {sample['value']:,.0f} req/s p50 "
                      f"{sample['p50']:.2f} ms p99 {sample['p99']:.2f} ms, proxy CPU {sample['proxy']:.1f} µs/req, "
                      f"spans exported {shown('exported')}, dropped {shown('dropped')}, received {shown('received')} "
                      f"in {shown('posts')} POSTs of {shown('post_bytes')} bytes (the receiver busy "
                      f"{'n/a' if sample['busy'] is None else format(sample['busy'], '.2f')} s answering them); FormGate "
                      f"stopped in {sample['stop']:.1f} s{' (killed: no exit within 20 s of SIGTERM)' if sample['killed'] else ''}",
                      flush=True)
    finally:
        for receiver in receivers.values():
            receiver.stop()
    result = {}
    for variant, values in samples.items():
        figures = medians(values)
        for key in ("exported", "dropped", "received", "posts"):
            known = [sample[key] for sample in values if sample[key] is not None]
            figures[key] = statistics.median(known) if known else None
        result[variant] = figures
    result["samples"] = {variant: [sample["value"] for sample in values] for variant, values in samples.items()}
    return result


# --- the rows
def measure(bench, sink_port, case, parts=PARTS):
    """The rows; `case` is the 4 KiB case's (conns, size, seed, duration). The sink's verified
    requests are returned too, for the run's total."""
    admin = Admin()
    verified = [0, 0]
    result = dict(seconds=case["duration"], conns=case["conns"], size=case["size"], repeats=bench.repeats,
                  cores=bench.cores, verified=verified)
    try:
        if "live" in parts:
            result["live"] = measure_live(bench, sink_port, case, admin, verified)
        if "uploads" in parts:
            result["uploads"] = measure_uploads(bench, admin)
        if "tracing" in parts:
            result["tracing"] = measure_tracing(bench, sink_port, case, admin, verified)
    finally:
        admin.remove()
    return result


def cell(value, digits=0):
    return "n/a" if value is None else f"{value:,.{digits}f}"


def lines(result):
    """The docs' and README's lines for the rows."""
    if not result:
        return []
    text = []
    conns, rounds = result["conns"], result["repeats"]
    live, uploads, tracing = result.get("live"), result.get("uploads"), result.get("tracing")
    if live:
        without, with_reader = live["without"], live["with"]
        text += [f"**Live view** (`scripts/bench_live.py`; 4 KiB uploads on {conns} connections through the rules "
                 f"route, one FormGate with its admin listener; medians of {rounds} rounds, alternating):", "",
                 "| `/uploads/events` | req/s | × no reader | p50 ms | p99 ms | proxy CPU µs/req | events read | "
                 "bytes read |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for view, figures in (("without", without), ("with", with_reader)):
            read = (f"{figures['events']:,.0f} | {figures['event_bytes']:,.0f} |" if view == "with" else "— | — |")
            text.append(f"| {VIEW_LABELS[view]} | {figures['value']:,.0f} | {figures['value'] / without['value']:.2f}× | "
                        f"{figures['p50']:.2f} | {figures['p99']:.2f} | {figures['proxy']:.1f} | " + read)
        text.append("")
    if uploads:
        text += [f"**`GET /uploads` under {uploads['held']:,} uploads in flight** (`scripts/bench_live.py`; "
                 f"{GETS} requests one after another, each on a new connection, connect to last byte):", "",
                 "| uploads in flight | median ms | max ms | answer bytes |", "|---:|---:|---:|---:|",
                 f"| {uploads['held']:,} | {uploads['median']:.1f} | {uploads['max']:.1f} | {uploads['size']:,.0f} |", ""]
    if tracing:
        off = tracing["off"]
        text += [f"**Tracing** (`scripts/bench_live.py`; 4 KiB uploads on {conns} connections through the rules "
                 f"route, `sample: 1` unless marked, a fresh FormGate per measurement; medians of {rounds} rounds, "
                 "alternating):",
                 "", "| tracing | req/s | × off | p50 ms | p99 ms | proxy CPU µs/req | × off CPU | spans exported | "
                 "spans dropped | spans received |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for variant in TRACINGS:
            figures = tracing[variant]
            spans = ("— | — | — |" if variant == "off" else
                     f"{cell(figures['exported'])} | {cell(figures['dropped'])} | "
                     + ("— |" if variant in ("down", "down10") else f"{cell(figures['received'])} |"))
            text.append(f"| {TRACING_LABELS[variant]} | {figures['value']:,.0f} | {figures['value'] / off['value']:.2f}× | "
                        f"{figures['p50']:.2f} | {figures['p99']:.2f} | {figures['proxy']:.1f} | "
                        f"{figures['proxy'] / off['proxy']:.2f}× | " + spans)
        text.append("")
    alone = result.get("alone")
    provenance = (f"Measured alone (`{alone['command']}`) on {alone['date']}, commit `{alone['commit']}`, "
                  f"{alone['formgate']} (release build), {alone['cores']} cores, load average (1 min) "
                  f"{alone['load_before']} before, {alone['load_after']} after; " if alone else "")
    seconds = str(result["seconds"]).rstrip("s")
    sentences = [f"every FormGate with `workers: {result['cores']}` and `admin: {{ listen, token_file }}` (a random "
                 "32-hex-character token, every admin request carrying it as a bearer token)"]
    if live:
        ratio = live["with"]["value"] / live["without"]["value"]
        sentences.append(
            f"live view: {seconds} s per measurement after a 1 s warm-up of each, the reader a thread of the bench "
            "reading the event stream as fast as it comes and counting what it got (per measurement, medians: "
            f"{live['with']['events']:,.0f} events, {live['with']['finished']:,.0f} of them `finished`, "
            f"{live['with']['event_bytes']:,.0f} bytes; FormGate never dropped it); with the reader "
            f"{ratio:.2f}× the requests per second without it (target 0.95× or more: "
            f"{'met' if ratio >= TARGET_RATIO else 'NOT met'}), "
            f"{live['with']['proxy'] - live['without']['proxy']:+.1f} µs of proxy CPU per request")
    if uploads:
        sentences.append(
            f"`/uploads`: {uploads['held']:,} raw sockets each holding a multipart upload open (8 KiB of a file "
            f"part declared 1 GiB, 16 more bytes every 10 s) to a holding upstream that never answers, "
            f"`limits: {{ connections: {CONNECTIONS} }}`, `timeouts: {{ idle: {IDLE} }}`; all listed in "
            f"`in_flight` {uploads['waited']:.1f} s after the first connect; every timed answer 200 and listing "
            f"all of them, none of the held uploads answered or closed by FormGate; the slowest of the {GETS} took "
            f"{uploads['max']:.1f} ms (target 100 ms or less: {'met' if uploads['max'] <= TARGET_MS else 'NOT met'})")
    if tracing:
        sentences.append(
            f"tracing: `tracing: {{ otlp: http://127.0.0.1:PORT/v1/traces, sample: 1 }}` against receivers "
            "started by the bench (Python http.servers counting the spans of each POST's OTLP JSON), "
            f"`timeouts: {{ drain: {DRAIN} }}` (the exporter's time to flush on SIGTERM, for the bench's stops), "
            f"{seconds} s per measurement after a 1 s warm-up, counters from `/metrics` read before the window "
            f"and 1 s after it (`{EXPORTED}`, `{DROPPED}`; the receiver's count over the same interval may differ "
            "from the exported count by a batch of 512 at its edges"
            + ("; n/a: not written by this build" if any(tracing[variant][key] is None for variant in ("fast", "down", "slow")
                                                         for key in ("exported", "dropped")) else "") + ")")
    body = "; ".join(sentences)
    verified = (f" Every request of every measurement verified by the sink ({result['verified'][0]:,} in these "
                "rows, warm-ups included: status 200, the rules applied, every file byte)" + (
                    "; the held uploads go to the holding upstream, not the sink" if uploads else "") + "."
                if live or tracing else "")
    text += [provenance + (body if provenance else body[:1].upper() + body[1:]) + "." + verified +
             " Generator, proxy, sink and the bench's reader, held uploads and receivers share the cores.", ""]
    return text


def main():
    """The rows alone: the Go tools and the sink as bench.py builds and starts them."""
    sys.argv[1:] = []
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import bench
    parts = tuple(part for part in os.environ.get("BENCH_LIVE_PARTS", " ".join(PARTS)).split())
    unknown = set(parts) - set(PARTS)
    if unknown or not parts:
        sys.exit(f"bench_live: unknown BENCH_LIVE_PARTS {' '.join(sorted(unknown))} (known: {' '.join(PARTS)})")
    os.makedirs(bench.work, exist_ok=True)
    if not os.path.exists(bench.binary):
        sys.exit(f"bench_live: no FormGate binary at {bench.binary} (make release)")
    # The binary measured is a copy made now, as bench.py makes it: a rebuild meanwhile changes nothing here.
    frozen = os.path.join(bench.work, "formgate-live")
    shutil.copy2(bench.binary, frozen)
    bench.binary = frozen
    try:
        bench.build_tools()
        sink, sink_port = bench.spawn_go([os.path.join(bench.tools, "sink")], "sink.log")
        facts = bench.facts()
        load_before = bench.loadavg()
        began = time.time()
        result = measure(bench, sink_port, bench.case_table()["small"][1], parts)
        settings = " ".join(f"{name}={value}" for name, value in sorted(os.environ.items()) if name.startswith("BENCH_"))
        result["alone"] = dict(command=(settings + " " if settings else "") + "scripts/bench_live.py",
                               date=time.strftime("%Y-%m-%d"), commit=facts["commit"], formgate=facts["formgate"],
                               cores=bench.cores, load_before=load_before, load_after=bench.loadavg())
        print("\n" + "\n".join(lines(result)))
        print(f"bench_live: the live view and tracing rows alone ({time.time() - began:.0f} s): docs left alone.")
    except bench.BenchFailure as failure:
        print(f"\nbench_live: FAILED\n{failure}", file=sys.stderr)
        sys.exit(1)
    finally:
        for each in bench.processes:
            bench.stop(each)
        if os.path.exists(frozen):
            os.remove(frozen)


if __name__ == "__main__":
    main()
