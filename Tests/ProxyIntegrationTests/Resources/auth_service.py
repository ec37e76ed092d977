#!/usr/bin/env python3
"""An auth service for the integration tests (AuthServiceTests, AuthHostileTests), standard
library only. Each subrequest's X-Service-Mode header picks the answer (default: allow).
Writes "listening on 127.0.0.1:PORT" to stderr, then serves until killed.

Modes:
  allow      200; X-User-Id is the bearer token's text (`Authorization: Bearer NAME`), else
             svc-alice; X-User-Role: uploader
  deny-401   401 with WWW-Authenticate: Bearer realm="svc" and a JSON body
  deny-403   403 with a text body
  garbage, status-500, status-302, status-200-forged-identity-crlf (a bare CR inside an
  identity header), truncated-head, huge-head (a 100 KiB header), closes-at-once,
  slow (answers allow after 30 s)
GET /_count answers how many subrequests arrived; GET /_last answers the last one's head."""
import socket, sys, threading, time

lock = threading.Lock()
seen = {"count": 0, "last": b""}

FIXED = {
    "deny-401": b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"svc\"\r\n"
                b"Content-Type: application/json\r\nContent-Length: 26\r\n\r\n{\"error\":\"login required\"}",
    "deny-403": b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: 20\r\n\r\nforbidden by policy\n",
    "garbage": b"NOT HTTP AT ALL\r\n\r\n",
    "status-500": b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 5\r\n\r\noops\n",
    "status-302": b"HTTP/1.1 302 Found\r\nLocation: http://login.example/\r\nContent-Length: 0\r\n\r\n",
    "status-200-forged-identity-crlf": b"HTTP/1.1 200 OK\r\nX-User-Id: a\rX-Admin: 1\r\nContent-Length: 0\r\n\r\n",
    "truncated-head": b"HTTP/1.1 200 OK\r\nX-Us",
    "huge-head": b"HTTP/1.1 200 OK\r\nX-Pad: " + b"p" * 100_000 + b"\r\nContent-Length: 0\r\n\r\n",
    "closes-at-once": b"",
}


def allow(user):
    return (b"HTTP/1.1 200 OK\r\nX-User-Id: " + user + b"\r\nX-User-Role: uploader\r\n"
            b"Content-Length: 0\r\n\r\n")


def answer(head):
    lines = head.split(b"\r\n")
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        fields[name.strip().lower()] = value.strip()
    target = lines[0].split(b" ")[1] if len(lines[0].split(b" ")) > 1 else b""
    if target == b"/_count":
        with lock:
            text = str(seen["count"]).encode()
        return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(text), text), None
    if target == b"/_last":
        with lock:
            last = seen["last"]
        return b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(last), last), None
    with lock:
        seen["count"] += 1
        seen["last"] = head
    mode = fields.get(b"x-service-mode", b"allow").decode()
    if mode == "slow":
        return None, 30
    if mode == "allow":
        authorization = fields.get(b"authorization", b"")
        user = authorization[7:] if authorization.lower().startswith(b"bearer ") else b"svc-alice"
        return allow(user), None
    return FIXED.get(mode, b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n"), None


def serve(connection):
    with connection:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = connection.recv(65536)
            if not chunk:
                return
            data += chunk
        reply, delay = answer(data.split(b"\r\n\r\n", 1)[0])
        if delay:
            time.sleep(delay)
            reply = allow(b"svc-alice")
        if reply:
            try:
                connection.sendall(reply)
            except OSError:
                pass


def main():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    print(f"auth service listening on 127.0.0.1:{listener.getsockname()[1]}", file=sys.stderr, flush=True)
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()


if __name__ == "__main__":
    sys.exit(main())
