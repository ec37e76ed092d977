"""An HTTP/1.1 upstream that reads request bodies at a fixed rate (1 MiB/s by default).

Usage: slow_upstream.py [--rate BYTES_PER_SECOND] [--pause-at BYTES]
Listens on a free loopback port and prints `listening on 127.0.0.1:PORT` on stderr.

- Any POST: the body (Content-Length or chunked) is read in 16 KiB pieces, each read waiting
  until the rate allows it, so the proxy sees a peer that really drains at that rate (the
  socket's receive buffer is set to 64 KiB, so the kernel does not hide the rate behind a
  large autotuned window). With `--pause-at`, reading stops once that many body bytes are
  in, until `GET /release`. The answer is a JSON receipt shaped like the demo upstream's:
  `body_size`, `fields` (name, value) and `files` (name, filename, size, sha256).
- `GET /progress`: `{"received": body bytes read so far, "answered": requests answered,
  "paused": whether a body is held at --pause-at}`, a side channel a client reads while an
  upload is in flight.
- `GET /release`: lets a paused body go on (at the same rate).
"""
import hashlib
import http.server
import json
import socket
import sys
import threading
import time

PIECE = 16384


class State:
    """What the side channel reports, shared by the handler threads."""

    def __init__(self, rate, pause_at):
        self.rate = rate
        self.pause_at = pause_at
        self.lock = threading.Lock()
        self.received = 0
        self.answered = 0
        self.paused = False
        self.released = threading.Event()

    def snapshot(self):
        with self.lock:
            return {"received": self.received, "answered": self.answered, "paused": self.paused}


class Pacer:
    """Reads from a file at the state's rate, counting into the state, pausing at --pause-at."""

    def __init__(self, state, stream):
        self.state = state
        self.stream = stream
        self.count = 0
        self.origin = time.monotonic()

    def read(self, size):
        chunks = []
        while size > 0:
            self.hold()
            due = self.origin + self.count / self.state.rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            chunk = self.stream.read(min(PIECE, size))
            if not chunk:
                raise ConnectionError("body ended early")
            chunks.append(chunk)
            size -= len(chunk)
            self.count += len(chunk)
            with self.state.lock:
                self.state.received += len(chunk)
        return b"".join(chunks)

    def hold(self):
        pause_at = self.state.pause_at
        if pause_at is None or self.count < pause_at or self.state.released.is_set():
            return
        with self.state.lock:
            self.state.paused = True
        self.state.released.wait()
        with self.state.lock:
            self.state.paused = False
        # The rate goes on from the release, without a burst for the time held.
        self.origin = time.monotonic() - self.count / self.state.rate


def read_body(handler, pacer):
    """The request body, by Content-Length or chunked."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        chunks = []
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(chunks)
            chunks.append(pacer.read(size))
            handler.rfile.readline()
    return pacer.read(int(handler.headers.get("Content-Length", "0")))


def receipt(content_type, body):
    """Sizes and digests of the body and of each multipart part."""
    answer = {"body_size": len(body), "body_sha256": hashlib.sha256(body).hexdigest(), "fields": [], "files": []}
    marker = "boundary="
    if marker not in content_type:
        return answer
    boundary = content_type.split(marker, 1)[1].split(";")[0].strip().strip('"').encode()
    for part in (b"\r\n" + body).split(b"\r\n--" + boundary)[1:]:
        if part.startswith(b"--"):
            break
        head, _, content = part[2:].partition(b"\r\n\r\n")
        disposition = next(
            (line for line in head.split(b"\r\n") if line.lower().startswith(b"content-disposition:")), b"")
        parameters = dict(
            item.strip().split(b"=", 1) for item in disposition.split(b";")[1:] if b"=" in item)
        name = parameters.get(b"name", b"").strip(b'"').decode()
        if b"filename" in parameters:
            answer["files"].append({
                "name": name, "filename": parameters[b"filename"].strip(b'"').decode(),
                "size": len(content), "sha256": hashlib.sha256(content).hexdigest(),
            })
        else:
            answer["fields"].append({"name": name, "value": content.decode(errors="replace")})
    return answer


def handler_class(state):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *arguments):
            pass

        def answer(self, document):
            data = json.dumps(document).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/release":
                state.released.set()
            self.answer(state.snapshot())

        def do_POST(self):
            body = read_body(self, Pacer(state, self.rfile))
            document = receipt(self.headers.get("Content-Type", ""), body)
            with state.lock:
                state.answered += 1
            self.answer(document)

    return Handler


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def server_bind(self):
        # Inherited by accepted sockets; fixes the window so the rate is what the proxy sees.
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        super().server_bind()


def main():
    rate = 1 << 20
    pause_at = None
    if "--rate" in sys.argv:
        rate = int(sys.argv[sys.argv.index("--rate") + 1])
    if "--pause-at" in sys.argv:
        pause_at = int(sys.argv[sys.argv.index("--pause-at") + 1])
    server = Server(("127.0.0.1", 0), handler_class(State(rate, pause_at)))
    print(f"listening on 127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
