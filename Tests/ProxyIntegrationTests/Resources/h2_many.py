"""Many concurrent multipart uploads on ONE prior-knowledge h2c connection, with the h2 library.

Usage: h2_many.py HOST PORT [--streams 100] [--size BYTES] [--path /upload] [--slow 0]
                  [--slow-path /slow] [--side URL] [--deadline SECONDS]
Opens one TCP connection (so one HTTP/2 connection, by construction) and starts every stream
at once: the first `--slow` streams go to `--slow-path`, the others to `--path`. Each stream is
a multipart body with a `title=stream-N` field and an `upload` part (filename `file-N.bin`) of
`--size` bytes, distinct per stream (a block seeded by N, each 64 KiB copy numbered); its
sha256 is computed as it is sent. DATA goes out round-robin, a frame per stream per turn,
within the windows the proxy grants.

With `--side URL` (the slow upstream's side channel), once every stream to `--path` has its
answer, the client reads `URL/progress` (recorded as `side_when_others_done`) and then
`URL/release`.

Prints one JSON object: `connections` (1), `streams` (per stream: index, path, id, status,
start, end (seconds from the first HEADERS), size, length (of the body), sha256, receipt),
`others_done_at` (when every stream to `--path` had its answer), `sent_when_others_done` (body
bytes sent by then on each stream to `--slow-path`, by index), `side_when_others_done`,
`peer_settings` and `error` (null, or why it stopped). Exits 1 on an error.
"""
import argparse
import hashlib
import json
import random
import select
import socket
import sys
import time
import urllib.request

import h2.config
import h2.connection
import h2.events
import h2.settings

BLOCK = 65536


class Upload:
    """One stream's body, produced as it is sent, and what came back."""

    def __init__(self, index, path, size):
        self.index = index
        self.path = path
        self.size = size
        self.boundary = f"h2many{index:04d}x{random.Random(index).getrandbits(64):016x}"
        self.base = bytearray(random.Random(index).randbytes(BLOCK))
        self.prefix = (
            f"--{self.boundary}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nstream-{index}\r\n"
            f"--{self.boundary}\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"file-{index}.bin\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode()
        self.suffix = f"\r\n--{self.boundary}--\r\n".encode()
        self.length = len(self.prefix) + size + len(self.suffix)
        self.sent = 0
        self.digest = hashlib.sha256()
        self.stream_id = None
        self.status = None
        self.answer = bytearray()
        self.start = None
        self.end = None
        self.reset = None

    def file_bytes(self, offset, count):
        """`count` bytes of the file from `offset` (within one 64 KiB copy)."""
        block, within = divmod(offset, BLOCK)
        self.base[0:4] = block.to_bytes(4, "big")
        return bytes(self.base[within:within + count])

    def next_piece(self, limit):
        """Up to `limit` bytes of the body from where it stands (file bytes go into the digest)."""
        if self.sent < len(self.prefix):
            piece = self.prefix[self.sent:self.sent + limit]
        elif self.sent < len(self.prefix) + self.size:
            offset = self.sent - len(self.prefix)
            count = min(limit, self.size - offset, BLOCK - offset % BLOCK)
            piece = self.file_bytes(offset, count)
            self.digest.update(piece)
        else:
            offset = self.sent - len(self.prefix) - self.size
            piece = self.suffix[offset:offset + limit]
        self.sent += len(piece)
        return piece

    @property
    def done_sending(self):
        return self.sent >= self.length

    def record(self, t0):
        try:
            receipt = json.loads(bytes(self.answer))
        except ValueError:
            receipt = bytes(self.answer[:300]).decode(errors="replace")
        return {
            "index": self.index, "path": self.path, "id": self.stream_id, "status": self.status,
            "start": None if self.start is None else self.start - t0,
            "end": None if self.end is None else self.end - t0,
            "size": self.size, "length": self.length, "sha256": self.digest.hexdigest() if self.done_sending else None,
            "reset": self.reset, "receipt": receipt,
        }


def get_json(url):
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


class Client:
    """One h2c connection carrying every upload, driven by select over its socket."""

    def __init__(self, host, port, uploads):
        self.uploads = uploads
        self.by_id = {}
        self.error = None
        self.sock = socket.create_connection((host, port), timeout=30)
        self.sock.setblocking(False)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.connection = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        # Answers are small; our own windows never hold the proxy back.
        self.connection.local_settings = h2.settings.Settings(
            client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 24})
        self.connection.initiate_connection()
        self.connection.increment_flow_control_window(1 << 28)
        self.t0 = time.monotonic()
        for upload in uploads:
            upload.stream_id = self.connection.get_next_available_stream_id()
            self.by_id[upload.stream_id] = upload
            self.connection.send_headers(upload.stream_id, [
                (":method", "POST"), (":scheme", "http"), (":authority", f"{host}:{port}"),
                (":path", upload.path), ("content-type", f"multipart/form-data; boundary={upload.boundary}"),
                ("content-length", str(upload.length)),
            ])
            upload.start = time.monotonic()
        self.outbound = bytearray(self.connection.data_to_send())

    @property
    def finished(self):
        return all(upload.end is not None or upload.reset is not None for upload in self.uploads)

    def fill(self):
        """One frame per stream per turn, while the windows allow and the socket keeps up."""
        while len(self.outbound) < (1 << 20):
            progressed = False
            for upload in self.uploads:
                if upload.done_sending or upload.reset is not None:
                    continue
                limit = min(self.connection.local_flow_control_window(upload.stream_id),
                            self.connection.max_outbound_frame_size)
                if limit <= 0:
                    continue
                piece = upload.next_piece(limit)
                self.connection.send_data(upload.stream_id, piece, end_stream=upload.done_sending)
                progressed = True
            self.outbound += self.connection.data_to_send()
            if not progressed:
                return

    def turn(self):
        """Sends what the socket takes, reads what came, for at most a second."""
        self.fill()
        readable, writable, _ = select.select([self.sock], [self.sock] if self.outbound else [], [], 1.0)
        if writable:
            try:
                del self.outbound[:self.sock.send(self.outbound)]
            except BlockingIOError:
                pass
        if readable:
            data = self.sock.recv(1 << 20)
            if not data:
                self.error = "connection closed by the proxy"
                return
            for event in self.connection.receive_data(data):
                self.handle(event)
            self.outbound += self.connection.data_to_send()

    def handle(self, event):
        if isinstance(event, h2.events.ResponseReceived):
            self.by_id[event.stream_id].status = int(dict(event.headers)[b":status"])
        elif isinstance(event, h2.events.DataReceived):
            self.by_id[event.stream_id].answer += event.data
            self.connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            self.by_id[event.stream_id].end = time.monotonic()
        elif isinstance(event, h2.events.StreamReset):
            self.by_id[event.stream_id].reset = int(event.error_code)
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.error = f"GOAWAY {event.error_code}"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--size", type=int, default=8 << 20)
    parser.add_argument("--path", default="/upload")
    parser.add_argument("--slow", type=int, default=0)
    parser.add_argument("--slow-path", default="/slow")
    parser.add_argument("--side")
    parser.add_argument("--deadline", type=float, default=300)
    arguments = parser.parse_args()
    deadline = time.monotonic() + arguments.deadline
    uploads = [
        Upload(index, arguments.slow_path if index < arguments.slow else arguments.path, arguments.size)
        for index in range(arguments.streams)]
    others = [upload for upload in uploads if goes_to_path(upload, arguments)]
    client = Client(arguments.host, arguments.port, uploads)
    report = {"side_when_others_done": None, "others_done_at": None, "sent_when_others_done": None}
    while client.error is None and not client.finished:
        if time.monotonic() > deadline:
            client.error = "deadline passed"
            break
        client.turn()
        if report["others_done_at"] is None and all(upload.end is not None for upload in others):
            report["others_done_at"] = time.monotonic() - client.t0
            report["sent_when_others_done"] = {
                upload.index: upload.sent for upload in uploads if not goes_to_path(upload, arguments)}
            if arguments.side is not None:
                report["side_when_others_done"] = get_json(arguments.side + "/progress")
                get_json(arguments.side + "/release")
    client.sock.close()
    print(json.dumps(dict(
        report, connections=1, streams=[upload.record(client.t0) for upload in uploads],
        peer_settings={str(int(key)): value for key, value in client.connection.remote_settings.items()},
        error=client.error)))
    sys.exit(1 if client.error else 0)


def goes_to_path(upload, arguments):
    """Whether the upload is one of the others (to `--path`), not one to `--slow-path`."""
    return upload.path != arguments.slow_path


if __name__ == "__main__":
    main()
