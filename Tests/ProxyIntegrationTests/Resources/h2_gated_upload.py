"""One multipart upload over HTTP/2 (h2c, prior knowledge; Debian's `h2` library) whose file
trickles 512 bytes every 100 ms until the file RELEASE exists, then goes whole: an h2 stream
the test can watch in flight.

Usage: h2_gated_upload.py HOST PORT PATH FILE_BYTES RELEASE
Prints one JSON object: {"status", "sent"}.
"""
import json
import os
import select
import socket
import sys
import time

import h2.config
import h2.connection
import h2.events
import h2.settings


def main():
    host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    size, release = int(sys.argv[4]), sys.argv[5]
    body = (b'--gate\r\nContent-Disposition: form-data; name="upload"; filename="h2.bin"\r\n'
            b'Content-Type: application/octet-stream\r\n\r\n' + b"h" * size + b"\r\n--gate--\r\n")
    sock = socket.create_connection((host, port))
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 20})
    conn.send_headers(1, [
        (":method", "POST"), (":scheme", "http"), (":authority", f"{host}:{port}"), (":path", path),
        ("content-type", "multipart/form-data; boundary=gate"), ("content-length", str(len(body)))])
    sock.sendall(conn.data_to_send())
    sent, status, ended = 0, None, False
    while status is None or not ended:
        if sent < len(body):
            step = 512 if not os.path.exists(release) else 16384
            window = conn.local_flow_control_window(1)
            piece = body[sent:sent + min(step, window, conn.max_outbound_frame_size)]
            if piece:
                conn.send_data(1, piece, end_stream=sent + len(piece) == len(body))
                sent += len(piece)
                sock.sendall(conn.data_to_send())
        released = os.path.exists(release)
        wait = 5 if sent == len(body) else (0 if released and conn.local_flow_control_window(1) > 0 else 0.1)
        readable, _, _ = select.select([sock], [], [], wait)
        if readable:
            data = sock.recv(65536)
            if not data:
                break
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.ResponseReceived):
                    status = int(dict(event.headers)[b":status"])
                elif isinstance(event, h2.events.StreamEnded):
                    ended = True
                elif isinstance(event, h2.events.StreamReset):
                    ended = True
            sock.sendall(conn.data_to_send())
    print(json.dumps({"status": status, "sent": sent}))


if __name__ == "__main__":
    main()
