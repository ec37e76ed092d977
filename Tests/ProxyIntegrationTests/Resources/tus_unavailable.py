"""An upstream that is up but failing, for FormGate's tus tests: reads each request's body
(Content-Length) and answers 503 with `{"error": "busy"}`, closing the connection; logs one
`POST PATH` line per request on stderr (an upstream-side count).
Usage: tus_unavailable.py (listens on a free loopback port, printed as `listening on` on stderr)."""
import http.server
import sys


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        print(f"POST {self.path}", file=sys.stderr, flush=True)
        body = b'{"error": "busy"}'
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening on 127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
server.serve_forever()
