"""An upstream that reads each request whole (Content-Length or chunked) and answers it only
once the file RELEASE exists: a request the test can prove is waiting on its upstream.
Writes "listening on 127.0.0.1:PORT" to stderr, then serves until killed.

Usage: gated_upstream.py RELEASE
"""
import os
import socket
import sys
import threading
import time


def read_request(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    fields = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        fields[name.strip().lower()] = value.strip()
    if b"content-length" in fields:
        length = int(fields[b"content-length"])
        while len(rest) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return False
            rest += chunk
        return True
    while not rest.endswith(b"0\r\n\r\n"):
        chunk = conn.recv(65536)
        if not chunk:
            return False
        rest += chunk
    return True


def serve(conn, release):
    with conn:
        if not read_request(conn):
            return
        while not os.path.exists(release):
            time.sleep(0.05)
        conn.sendall(b"HTTP/1.1 201 Created\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")


def main():
    release = sys.argv[1]
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    sys.stderr.write("listening on 127.0.0.1:%d\n" % listener.getsockname()[1])
    sys.stderr.flush()
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn, release), daemon=True).start()


if __name__ == "__main__":
    main()
