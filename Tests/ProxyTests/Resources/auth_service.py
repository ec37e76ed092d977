"""A small auth service for AuthServiceClientTests (stdlib only).

Usage: auth_service.py LOG_PATH. Prints "listening on 127.0.0.1:PORT" on stdout, then serves
until killed. Every request it sees is appended to LOG_PATH as one JSON line (method, path,
headers in order, and the body bytes that arrived) before it answers. What it answers depends on
the path after the test's prefix /check:

  /allow...        200 with X-User-Id: user-<the Authorization value's last word> and X-Scope
  /allow-repeat    200 with X-User-Id twice (ambiguous identity)
  /deny401         401, WWW-Authenticate, Content-Type, X-Internal (not to be relayed), a body
  /deny403         403 with a chunked JSON body
  /big             401 with a 20 KiB body (over the client's 16 KiB)
  /redirect        302 to elsewhere
  /interim         100 Continue, then 200 with X-User-Id
  /slow            no answer until the client goes away (past any timeout)
  /garbage         bytes that are not HTTP, then close
  /hangup          close without answering
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG_PATH = sys.argv[1]


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        # Anything sent past the declared length (there must be nothing) is read too: what
        # the head's read left buffered, or what arrives within 0.2 s.
        self.connection.settimeout(0.2)
        try:
            extra = self.rfile.read1(65536)
        except OSError:
            extra = b""
        self.connection.settimeout(None)
        line = {
            "method": self.command,
            "path": self.path,
            "headers": [[name, value] for name, value in self.headers.items()],
            "body_bytes": len(body) + len(extra),
        }
        with open(LOG_PATH, "a", encoding="utf-8") as log:
            log.write(json.dumps(line) + "\n")

    def answer(self, status, headers, body=b""):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def handle_any(self):
        self.record()
        path = self.path.split("?", 1)[0]
        route = path[len("/check"):] if path.startswith("/check") else path
        if route.startswith("/allow-repeat"):
            self.answer(200, [("X-User-Id", "one"), ("X-User-Id", "two")])
        elif route.startswith("/allow"):
            token = (self.headers.get("Authorization") or "anonymous").split()[-1]
            self.answer(200, [("X-User-Id", "user-" + token), ("X-Scope", "photos"), ("X-Other", "x")], b"ok")
        elif route == "/deny401":
            self.answer(401, [("WWW-Authenticate", 'Bearer realm="uploads"'), ("Content-Type", "text/plain"),
                              ("X-Internal", "do-not-relay")], b"sign in first\n")
        elif route == "/deny403":
            body = b'{"error":"not your bucket"}'
            self.send_response(403)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Connection", "close")
            self.end_headers()
            for piece in (body[:10], body[10:]):
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
            self.close_connection = True
        elif route == "/big":
            self.answer(401, [("Content-Type", "text/plain")], b"x" * 20480)
        elif route == "/redirect":
            self.answer(302, [("Location", "http://elsewhere.example/")])
        elif route == "/interim":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            self.answer(200, [("X-User-Id", "after-interim")])
        elif route == "/slow":
            # Wait for the client to close (no timer: the test's timeout is the only clock).
            while self.connection.recv(65536):
                pass
            self.close_connection = True
        elif route == "/garbage":
            self.wfile.write(b"SURELY NOT HTTP\r\n\r\n")
            self.close_connection = True
        else:
            self.close_connection = True

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = do_PATCH = handle_any


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print("listening on 127.0.0.1:%d" % server.server_address[1], flush=True)
server.serve_forever()
