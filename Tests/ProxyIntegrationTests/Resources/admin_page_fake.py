#!/usr/bin/env python3
"""A stand-in for the admin listener's `GET /` and `GET /uploads/events`, for AdminPageTests.

Usage: admin_page_fake.py --page Sources/Proxy/AdminPage.swift [--token T] [--events-token E]
       admin_page_fake.py --page Sources/Proxy/AdminPage.swift --print-page

It serves the page exactly as compiled into the proxy: the raw string literal of
`AdminPage.html`, taken from the Swift source (ProxyTests checks the two agree). With
--token, `/` needs `?access_token=T` or `Authorization: Bearer T`, and the event stream needs
the Bearer header with the events token (--events-token, default T: a different one stands for a
token rotated after the page loaded); a token in the event stream's URL is refused (400).

The first event stream plays SCRIPT below, one event every 300 ms, each written in small pieces
(1 to 21 bytes, and a cut after every CR) so that lines, CRLF pairs and UTF-8 sequences are
split across reads; events use LF, CRLF and CR line ends and multi-line data. Then it closes.
Later streams send RECONNECTED's snapshot and a keep-alive comment every second.
Each request is logged to standard error as `request PATH auth=ok|none|wrong`.
"""

import argparse
import json
import socket
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
       "img-src data:; base-uri 'none'; form-action 'none'")
HOSTILE_FILENAME = "<img src=x onerror=alert(1)>"
HOSTILE_IDENTITY = "<script>window.formgatePwned = 1</script>"
MIB = 1 << 20
NOW = datetime.now(timezone.utc)


def extract_page(swift_path):
    """The text of the Swift file's one raw multi-line literal (#\"\"\" ... \"\"\"#)."""
    with open(swift_path, encoding="utf-8") as file:
        source = file.read()
    opening = '#"""\n'
    start = source.index(opening) + len(opening)
    end = source.index('"""#', start)
    body = source[start:end]
    if "\\#" in body:
        raise SystemExit("the page literal holds a raw-string escape (\\#), which this does not expand")
    lines = body.split("\n")
    indent = lines[-1]
    if indent.strip():
        raise SystemExit("the closing delimiter is not on its own line")
    page = []
    for line in lines[:-1]:
        if line.startswith(indent):
            page.append(line[len(indent):])
        elif not line.strip():
            page.append("")
        else:
            raise SystemExit(f"a page line is indented less than the closing delimiter: {line!r}")
    return "\n".join(page)


def stamp(seconds_ago):
    return (NOW - timedelta(seconds=seconds_ago)).isoformat(timespec="seconds").replace("+00:00", "Z")


def upload(id, stage, bytes_in, expected, route="avatars", protocol="http/1.1", identity=None, part=None,
           tus=None, rate=0, started=5):
    return {"id": id, "route": route, "protocol": protocol, "client": "203.0.113.7:50412",
            "identity": identity, "started": stamp(started), "bytes_in": bytes_in,
            "bytes_expected": expected, "part": part, "stage": stage, "bytes_per_second": rate, "tus": tus}


def finished(id, status, duration_ms, bytes_in, error=None, route="avatars", seconds_ago=0):
    return {"id": id, "route": route, "status": status, "duration_ms": duration_ms, "bytes_in": bytes_in,
            "error": error, "finished_at": stamp(seconds_ago)}


HOSTILE_PART = {"name": "file", "filename": HOSTILE_FILENAME}
TUS_PART = {"name": "file", "filename": "clip ☀.webm"}


def tus_upload(offset, started=30):
    return upload("t1", "receiving", offset, None, route="videos", protocol="h2", identity="user-42",
                  part=TUS_PART, tus={"offset": offset, "length": 5 * MIB}, rate=512 * 1024, started=started)


# (event, data, line end); ("comment", text, end) writes ": text".
SCRIPT = [
    ("comment", "keep-alive", "\n"),
    ("snapshot", {"in_flight": [
        upload("a1", "receiving", 65536, 10 * MIB, identity=HOSTILE_IDENTITY, part=HOSTILE_PART, rate=40000),
        tus_upload(1 * MIB)],
        "finished": [finished("f0", 200, 1234, 2048, seconds_ago=60)]}, "\n"),
    ("upload", upload("a1", "receiving", 2 * MIB, 10 * MIB, identity=HOSTILE_IDENTITY, part=HOSTILE_PART,
                      rate=1536 * 1024), "\n"),
    ("upload", upload("a1", "held:scan", 5 * MIB, 10 * MIB, identity=HOSTILE_IDENTITY, part=HOSTILE_PART,
                      rate=2 * MIB), "\r\n"),
    ("upload", upload("c1", "receiving", 4096, None, route="forms", started=1), "\r"),
    ("upload", upload("a1", "delivering", 10 * MIB, 10 * MIB, identity=HOSTILE_IDENTITY, part=HOSTILE_PART,
                      rate=3 * MIB), "\r\n"),
    ("upload", tus_upload(3 * MIB), "\n"),
    ("upload", upload("c1", "held:auth", 9000, None, route="forms", started=1), "\n"),
    ("comment", "keep-alive", "\r\n"),
    ("finished", finished("a1", 201, 5210, 10 * MIB), "\n"),
    ("finished", finished("c1", 502, 830, 9000, error="upstream closed the connection", route="forms"), "\r"),
]
RECONNECTED = {"in_flight": [
    tus_upload(4 * MIB),
    upload("w1", "waiting_upstream", 3 * MIB, 3 * MIB, route="forms", protocol="h2", identity="svc-backup",
           part={"name": "doc", "filename": "report.pdf"}, rate=0, started=12)],
    "finished": [finished("f0", 200, 1234, 2048, seconds_ago=60),
                 finished("c1", 502, 830, 9000, error="upstream closed the connection", route="forms",
                          seconds_ago=2),
                 finished("a1", 201, 5210, 10 * MIB, seconds_ago=3)]}


def encode(event, data, end):
    """One event in the stream's bytes; data is pretty-printed, so it spans several data: lines."""
    if event == "comment":
        return f": {data}{end}{end}".encode()
    lines = json.dumps(data, indent=1, ensure_ascii=False).split("\n")
    text = f"event: {event}{end}" + "".join(f"data: {line}{end}" for line in lines) + end
    return text.encode()


def pieces(data):
    """Cuts after every CR and otherwise in pieces of 1, 2, 3, 5, 8, 13, 21 bytes in turn."""
    sizes = [1, 2, 3, 5, 8, 13, 21]
    turn = 0
    start = 0
    while start < len(data):
        end = min(start + sizes[turn % len(sizes)], len(data))
        turn += 1
        carriage = data.find(b"\r", start, end)
        if carriage >= 0:
            end = carriage + 1
        yield data[start:end]
        start = end


class Handler(BaseHTTPRequestHandler):
    server_version = "admin-page-fake"

    def log_message(self, format, *args):
        pass

    def bearer(self):
        value = self.headers.get("Authorization", "")
        return value[len("Bearer "):] if value.startswith("Bearer ") else None

    def do_GET(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        options = self.server.options
        presented = self.bearer()
        if url.path == "/" and presented is None:
            presented = (query.get("access_token") or [None])[0]
        wanted = options.events_token if url.path == "/uploads/events" else options.token
        auth = "none" if presented is None else ("ok" if presented == wanted else "wrong")
        print(f"request {self.path if url.path != '/' else '/'} auth={auth}", file=sys.stderr, flush=True)
        if url.path == "/uploads/events" and "access_token" in query:
            return self.answer(400, "text/plain", b"the token belongs in the Authorization header\n")
        if options.token is not None and auth != "ok":
            return self.answer(401, "text/plain", b"unauthorized\n", {"WWW-Authenticate": "Bearer"})
        if url.path == "/":
            return self.answer(200, "text/html; charset=utf-8", self.server.page,
                               {"Content-Security-Policy": CSP})
        if url.path == "/uploads/events":
            return self.stream()
        self.answer(404, "text/plain", b"not found\n")

    def answer(self, status, content_type, body, headers=None):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def stream(self):
        with self.server.lock:
            self.server.streams += 1
            first = self.server.streams == 1
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.flush()
        try:
            if first:
                for event, data, end in SCRIPT:
                    for piece in pieces(encode(event, data, end)):
                        self.wfile.write(piece)
                        time.sleep(0.002)
                    time.sleep(0.3)
                return
            self.wfile.write(encode("snapshot", RECONNECTED, "\n"))
            for _ in range(120):
                time.sleep(1)
                self.wfile.write(b": keep-alive\n\n")
        except (BrokenPipeError, ConnectionResetError):
            pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--page", required=True)
    parser.add_argument("--token")
    parser.add_argument("--events-token")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--print-page", action="store_true")
    options = parser.parse_args()
    page = extract_page(options.page).encode()
    if options.print_page:
        sys.stdout.buffer.write(page)
        return
    if options.events_token is None:
        options.events_token = options.token
    server = ThreadingHTTPServer(("127.0.0.1", options.port), Handler)
    server.daemon_threads = True
    server.options, server.page, server.lock, server.streams = options, page, threading.Lock(), 0
    print(f"listening on 127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
