"""A Qiniu-compatible form-upload mock for FormGate's tests.

Checks what Qiniu checks on a form upload: the `token` field is AK:sign:policy with
sign = urlsafe_b64(HMAC-SHA1(SK, policy)), the policy's deadline is in the future, its scope is
bucket:key for the `key` field, `file` is the last part, and the body came with a
Content-Length. Answers {"hash", "key", "fsize", "mimeType" (the file part's type, which Qiniu
stores), "sha256", "fields"} (200) or {"error"} (401/400).
Usage: qiniu_mock.py ACCESS_KEY SECRET_KEY BUCKET"""
import base64
import email.parser
import email.policy
import hashlib
import hmac
import http.server
import json
import sys
import time

AK, SK, BUCKET = sys.argv[1], sys.argv[2], sys.argv[3]


def b64(data):
    return base64.urlsafe_b64encode(data).decode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, payload):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        if "Content-Length" not in self.headers or "Transfer-Encoding" in self.headers:
            return self.answer(400, {"error": "Content-Length required"})
        body = self.rfile.read(int(self.headers["Content-Length"]))
        head = f"Content-Type: {self.headers['Content-Type']}\r\n\r\n".encode()
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
        parts = []
        for part in message.iter_parts():
            params = dict(part.get_params(header="content-disposition") or [])
            parts.append((params.get("name"), params.get("filename"), part.get_payload(decode=True),
                          part.get_content_type()))
        fields = {name: data.decode() for name, filename, data, _ in parts if filename is None}
        if not parts or parts[-1][0] != "file" or parts[-1][1] is None:
            return self.answer(400, {"error": "file must be the last part", "order": [p[0] for p in parts]})
        token = fields.get("token", "")
        try:
            access_key, sign, encoded = token.split(":")
            policy = json.loads(base64.urlsafe_b64decode(encoded))
        except Exception:
            return self.answer(401, {"error": "bad token", "token": token})
        expected = b64(hmac.new(SK.encode(), encoded.encode(), hashlib.sha1).digest())
        if access_key != AK or sign != expected:
            return self.answer(401, {"error": "bad signature"})
        if policy.get("deadline", 0) < time.time():
            return self.answer(401, {"error": "token expired"})
        key = fields.get("key")
        if policy.get("scope") != f"{BUCKET}:{key}":
            return self.answer(401, {"error": "scope mismatch", "scope": policy.get("scope"), "key": key})
        data = parts[-1][2]
        self.answer(200, {"hash": hashlib.sha1(data).hexdigest(), "key": key, "fsize": len(data),
                          "mimeType": parts[-1][3], "sha256": hashlib.sha256(data).hexdigest(),
                          "fields": sorted(fields)})

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"listening on 127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
server.serve_forever()
