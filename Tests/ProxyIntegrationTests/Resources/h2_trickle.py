"""An HTTP/2 (h2c, prior knowledge) client on Debian's `h2` library that sends one POST's
body one byte every 100 ms, as a slow-drip upload does, until the server answers or resets
the stream, or the whole body went.

Usage: h2_trickle.py HOST PORT PATH LENGTH
Prints one JSON object: {"status" (or null), "reset" (error code or null), "sent" (bytes),
"seconds" (from the HEADERS to the answer)}.
"""
import json
import select
import socket
import sys
import time

import h2.config
import h2.connection
import h2.events


def main():
    host, port, path, length = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    sock = socket.create_connection((host, port))
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    conn.send_headers(
        1,
        [(":method", "POST"), (":scheme", "http"), (":authority", f"{host}:{port}"), (":path", path),
         ("content-type", "application/octet-stream"), ("content-length", str(length))])
    sock.sendall(conn.data_to_send())
    started = time.monotonic()
    sent, status, reset = 0, None, None
    next_byte = started
    while status is None and reset is None:
        timeout = max(0.0, next_byte - time.monotonic())
        readable, _, _ = select.select([sock], [], [], timeout)
        if readable:
            data = sock.recv(65536)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived) and event.stream_id == 1:
                    status = int(dict(event.headers)[b":status"])
                elif isinstance(event, h2.events.StreamReset) and event.stream_id == 1:
                    reset = int(event.error_code)
            sock.sendall(conn.data_to_send())
            continue
        if sent < length:
            conn.send_data(1, b"x", end_stream=sent + 1 == length)
            sent += 1
            sock.sendall(conn.data_to_send())
        next_byte += 0.1
    print(json.dumps({"status": status, "reset": reset, "sent": sent,
                      "seconds": round(time.monotonic() - started, 3)}))
    sock.close()


if __name__ == "__main__":
    main()
