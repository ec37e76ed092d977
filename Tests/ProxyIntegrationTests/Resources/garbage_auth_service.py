#!/usr/bin/env python3
"""A misbehaving auth service for AuthHostileTests: each subrequest's X-Service-Mode header
picks the answer. Writes "listening on 127.0.0.1:PORT" to stderr, then serves until killed.
Modes: allow (200 with X-User-Id: svc-alice), garbage, status-500, status-302,
status-200-forged-identity-crlf (a bare CR inside an identity header), truncated-head,
huge-head (a 100 KiB header), closes-at-once, slow (answers after 30 s)."""
import socket, sys, threading, time

ANSWERS = {
    "allow": b"HTTP/1.1 200 OK\r\nX-User-Id: svc-alice\r\nContent-Length: 0\r\n\r\n",
    "garbage": b"NOT HTTP AT ALL\r\n\r\n",
    "status-500": b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\noops\n",
    "status-302": b"HTTP/1.1 302 Found\r\nLocation: http://login.example/\r\nContent-Length: 0\r\n\r\n",
    "status-200-forged-identity-crlf": b"HTTP/1.1 200 OK\r\nX-User-Id: a\rX-Admin: 1\r\nContent-Length: 0\r\n\r\n",
    "truncated-head": b"HTTP/1.1 200 OK\r\nX-Us",
    "huge-head": b"HTTP/1.1 200 OK\r\nX-Pad: " + b"p" * 100_000 + b"\r\nContent-Length: 0\r\n\r\n",
    "closes-at-once": b"",
}


def serve(connection):
    with connection:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = connection.recv(65536)
            if not chunk:
                return
            data += chunk
        mode = ""
        for line in data.split(b"\r\n\r\n", 1)[0].split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"x-service-mode":
                mode = value.strip().decode()
        if mode == "slow":
            time.sleep(30)
            connection.sendall(ANSWERS["allow"])
            return
        answer = ANSWERS.get(mode, b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        if answer:
            try:
                connection.sendall(answer)
            except OSError:
                pass


def main():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    print(f"garbage auth service listening on 127.0.0.1:{listener.getsockname()[1]}", file=sys.stderr, flush=True)
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
