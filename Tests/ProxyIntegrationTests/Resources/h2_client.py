"""A minimal HTTP/2 upload client on Debian's `h2` library, over one socket (h2c with prior
knowledge) or one TLS socket (ALPN `h2`), sending DATA only as far as the flow-control
windows allow.

Usage:
  h2_client.py HOST PORT upload --file PATH [--field NAME=VALUE ...] [--path /upload]
      [--tls --cafile CA --server-name NAME] [--filename NAME] [--type TYPE]
    One multipart upload; prints one JSON object:
    {"status", "body" (the answer, parsed when JSON), "alpn", "local_port", "stream"}.
  h2_client.py HOST PORT reload --file PATH [--path /upload]
    The SIGHUP scenario, on ONE connection, printing one JSON line per event:
      stream 1 uploads whole                            -> {"event": "answer", "stream": 1, ...}
      stream 3 sends all but its last DATA              -> {"event": "inflight", "stream": 3}
      (waits for a line on stdin, serving the connection meanwhile: the test reloads)
      stream 3 sends its last DATA and ends             -> {"event": "answer", "stream": 3, ...}
      stream 5 uploads whole                            -> {"event": "answer", "stream": 5, ...}
                                                        -> {"event": "done", "connections": 1, ...}
The file is read in 64 KiB pieces: the body is never held in memory whole.
"""
import argparse
import json
import os
import select
import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.events
import h2.settings

BOUNDARY = "h2clientBoundary7MA4YWxkTrZu0gW"
PIECE = 65536


class Stream:
    def __init__(self):
        self.status = None
        self.body = bytearray()
        self.ended = False
        self.reset = None


class Client:
    """One HTTP/2 connection; `pump` reads the socket and turns frames into stream state."""

    def __init__(self, args):
        raw = socket.create_connection((args.host, args.port), timeout=120)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.local_port = raw.getsockname()[1]
        self.alpn = None
        if args.tls:
            context = ssl.create_default_context(cafile=args.cafile)
            context.set_alpn_protocols(["h2", "http/1.1"])
            self.sock = context.wrap_socket(raw, server_hostname=args.server_name)
            self.alpn = self.sock.selected_alpn_protocol()
            if self.alpn != "h2":
                raise SystemExit(f"ALPN chose {self.alpn!r}, not h2")
        else:
            self.sock = raw
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.conn.initiate_connection()
        # A large receive window: answers are small, but do not let them stall.
        self.conn.increment_flow_control_window(16 << 20)
        self.flush()
        self.streams = {}
        self.terminated = None

    def flush(self):
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def pump(self, timeout=120):
        """Reads what the server sent (waiting at most `timeout` s) and handles its events."""
        pending = isinstance(self.sock, ssl.SSLSocket) and self.sock.pending()
        if not pending:
            readable, _, _ = select.select([self.sock], [], [], timeout)
            if not readable:
                raise SystemExit("timed out waiting for the server")
        data = self.sock.recv(1 << 16)
        if not data:
            raise SystemExit("the server closed the connection")
        for event in self.conn.receive_data(data):
            self.handle(event)
        self.flush()

    def handle(self, event):
        stream = self.streams.get(getattr(event, "stream_id", None))
        if isinstance(event, h2.events.ResponseReceived) and stream:
            stream.status = int(dict(event.headers)[b":status"])
        elif isinstance(event, h2.events.DataReceived):
            self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            if stream:
                stream.body += event.data
        elif isinstance(event, h2.events.StreamEnded) and stream:
            stream.ended = True
        elif isinstance(event, h2.events.StreamReset) and stream:
            stream.reset = event.error_code
            stream.ended = True
        elif isinstance(event, h2.events.ConnectionTerminated):
            self.terminated = event.error_code
            raise SystemExit(f"GOAWAY {event.error_code}")

    def start(self, path, length, authority):
        stream_id = self.conn.get_next_available_stream_id()
        self.streams[stream_id] = Stream()
        self.conn.send_headers(stream_id, [
            (":method", "POST"), (":scheme", "https" if self.alpn else "http"),
            (":authority", authority), (":path", path),
            ("content-type", f"multipart/form-data; boundary={BOUNDARY}"),
            ("content-length", str(length)),
        ])
        self.flush()
        return stream_id

    def send(self, stream_id, data, end=False):
        """Sends `data` as DATA frames no larger than the peer's frame size or open window."""
        view = memoryview(data)
        while view:
            window = min(self.conn.local_flow_control_window(stream_id), self.conn.max_outbound_frame_size)
            if window <= 0:
                self.pump()
                continue
            self.conn.send_data(stream_id, view[:window].tobytes())
            view = view[window:]
            self.flush()
        if end:
            self.conn.end_stream(stream_id)
            self.flush()

    def answer(self, stream_id):
        stream = self.streams[stream_id]
        while not stream.ended:
            self.pump()
        body = bytes(stream.body)
        try:
            parsed = json.loads(body)
        except ValueError:
            parsed = body.decode("utf-8", "replace")
        return {"status": stream.status, "body": parsed, "reset": stream.reset, "stream": stream_id,
                "alpn": self.alpn, "local_port": self.local_port}


def quoted(value):
    return value.replace("\\", "\\\\").replace('"', '\\"')


def multipart(fields, path, filename, content_type):
    """The body's head (fields and the file part's head), the file's size, and its tail."""
    head = b""
    for name, value in fields:
        head += (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{quoted(name)}\"\r\n\r\n"
                 f"{value}\r\n").encode()
    head += (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"doc\"; "
             f"filename=\"{quoted(filename)}\"\r\nContent-Type: {content_type}\r\n\r\n").encode()
    return head, os.path.getsize(path), f"\r\n--{BOUNDARY}--\r\n".encode()


def upload(client, args, fields, hold_last=False):
    """One upload on a new stream; with `hold_last`, stops before the closing delimiter (the
    last DATA) and returns the stream id and that delimiter."""
    head, size, tail = multipart(fields, args.file, args.filename or os.path.basename(args.file), args.type)
    stream_id = client.start(args.path, len(head) + size + len(tail), args.server_name or args.host)
    client.send(stream_id, head)
    with open(args.file, "rb") as handle:
        while piece := handle.read(PIECE):
            client.send(stream_id, piece)
    if hold_last:
        return stream_id, tail
    client.send(stream_id, tail, end=True)
    return client.answer(stream_id)


def reload_scenario(client, args):
    def emit(event, **values):
        print(json.dumps({"event": event, **values}), flush=True)

    emit("answer", **upload(client, args, [("title", "first")]))
    # The in-flight stream: everything but the closing delimiter, then wait for the reload.
    stream_id, rest = upload(client, args, [("title", "inflight")], hold_last=True)
    emit("inflight", stream=stream_id, local_port=client.local_port)
    while True:
        readable, _, _ = select.select([client.sock, sys.stdin], [], [], 120)
        if not readable:
            raise SystemExit("timed out waiting for the reload signal")
        if sys.stdin in readable:
            sys.stdin.readline()
            break
        client.pump()
    client.send(stream_id, rest, end=True)
    emit("answer", **client.answer(stream_id))
    emit("answer", **upload(client, args, [("title", "after")]))
    emit("done", connections=1, local_port=client.local_port)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("host")
    parser.add_argument("port", type=int)
    parser.add_argument("mode", choices=["upload", "reload"])
    parser.add_argument("--file", required=True)
    parser.add_argument("--filename")
    parser.add_argument("--type", default="application/octet-stream")
    parser.add_argument("--field", action="append", default=[])
    parser.add_argument("--path", default="/upload")
    parser.add_argument("--tls", action="store_true")
    parser.add_argument("--cafile")
    parser.add_argument("--server-name")
    args = parser.parse_args()
    client = Client(args)
    if args.mode == "upload":
        fields = [tuple(field.split("=", 1)) for field in args.field]
        print(json.dumps(upload(client, args, fields)))
    else:
        reload_scenario(client, args)
    client.conn.close_connection()
    client.flush()
    client.sock.close()


main()
