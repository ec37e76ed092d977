"""A verifying Tencent COS POST Object endpoint for FormGate's tests, written from Tencent's
POST Object document (request form, "signature protection", its worked example) and its
"POST Object common exceptions" page; no SDK code.

Usage: cos_post_mock.py --access-key SECRET_ID --secret-key SECRET_KEY --bucket B [--region R]
                        [--clock-offset SECONDS] [--security-token TOKEN]

Listens on 127.0.0.1:0 and prints `listening on 127.0.0.1:PORT` on stderr; serves requests
concurrently over HTTP/1.1.

POST (any path) checks, as COS does, and stores the object:
- a Content-Length (411 MissingContentLength for a chunked body, read to its end first so
  the answer reaches a client still sending);
- a multipart/form-data body whose last part is the `file` part (400 InvalidArgument
  otherwise); form field names are case-insensitive;
- `q-sign-algorithm` is sha1, `q-ak` is the SecretId, `q-key-time` is "start;end" with now
  (+ --clock-offset) inside it, and `q-signature` = hex HMAC-SHA1(SignKey, StringToSign) with
  SignKey = hex HMAC-SHA1(SecretKey, q-key-time) and StringToSign = hex SHA-1 of the policy
  JSON text (the base64-decoded `policy` field);
- `x-cos-security-token`: with --security-token it is required and must match; without, a
  token is refused (the mock's SecretId is a permanent key);
- the policy's `expiration` is after now;
- every condition: {"field": value} (exact), ["eq", "$f", v], ["starts-with", "$f", prefix]
  against the form fields (`bucket` against B; the policy's `q-sign-time` against the
  `q-key-time` field, as Tencent's example pairs them), ["content-length-range", min, max]
  against the file's byte count.
The object's Content-Type is the `Content-Type` form field (COS ignores the file part's own),
else application/octet-stream. `${filename}` in the key is replaced by the file's name.
Success: 204, or `success_action_status` 200 (empty) / 201 (a PostResponse XML), or 303 to
`success_action_redirect`. Errors: COS's XML <Error><Code>..</Code><Message>..</Message>...
</Error> with its codes.

GET /KEY (URL-encoded) returns the stored bytes with the stored Content-Type (404 NoSuchKey
otherwise); GET / lists the stored keys and sizes (a ListBucketResult), so a test can see that
nothing was stored."""
import argparse
import base64
import binascii
import calendar
import hashlib
import hmac
import http.server
import json
import re
import signal
import sys
import threading
import time
import urllib.parse
import uuid
from xml.sax.saxutils import escape

PARAMETER = re.compile(r';\s*([A-Za-z0-9_*.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)')


class Refusal(Exception):
    """An answer COS gives instead of storing: an HTTP status, a COS error code, a message."""

    def __init__(self, status, code, message):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def parse_parameters(value):
    """The value before the first `;` and its parameters (quoted strings unescaped)."""
    head = value.split(";", 1)[0].strip()
    parameters = {}
    for name, raw in PARAMETER.findall(value):
        raw = raw.strip()
        if raw.startswith('"'):
            raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
        parameters[name.lower()] = raw
    return head, parameters


def parse_form(content_type, body):
    """The parts of a multipart/form-data body: (name, filename, content type, bytes)."""
    kind, parameters = parse_parameters(content_type or "")
    boundary = parameters.get("boundary")
    if kind.lower() != "multipart/form-data" or not boundary:
        raise Refusal(400, "InvalidArgument", "the body must be multipart/form-data with a boundary")
    delimiter = b"--" + boundary.encode()
    if not body.startswith(delimiter):
        raise Refusal(400, "MalformedPOSTRequest", "the body does not start with the boundary")
    parts, position = [], len(delimiter)
    while body[position:position + 2] != b"--":
        if body[position:position + 2] != b"\r\n":
            raise Refusal(400, "MalformedPOSTRequest", "a delimiter line does not end in CRLF")
        end = body.find(b"\r\n" + delimiter, position + 2)
        if end < 0:
            raise Refusal(400, "MalformedPOSTRequest", "the body has no closing delimiter")
        head, separator, data = body[position + 2:end].partition(b"\r\n\r\n")
        if not separator:
            raise Refusal(400, "MalformedPOSTRequest", "a part has no header section")
        headers = {}
        for line in head.decode("utf-8").split("\r\n"):
            name, colon, value = line.partition(":")
            if not colon:
                raise Refusal(400, "MalformedPOSTRequest", f"a part header without a colon: {line!r}")
            headers[name.strip().lower()] = value.strip()
        disposition, parameters = parse_parameters(headers.get("content-disposition", ""))
        if disposition.lower() != "form-data" or "name" not in parameters:
            raise Refusal(400, "MalformedPOSTRequest", "a part without Content-Disposition: form-data; name")
        parts.append((parameters["name"], parameters.get("filename"), headers.get("content-type"), data))
        position = end + 2 + len(delimiter)
    return parts


def policy_time(text):
    """Unix seconds of an ISO 8601 UTC time (`2026-12-01T12:00:00.000Z`, fraction optional)."""
    match = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?Z", text or "")
    if not match:
        raise Refusal(400, "InvalidPolicyDocument", f"expiration {text!r} is not an ISO 8601 UTC time")
    return calendar.timegm(tuple(int(group) for group in match.groups()[:6]))


def hmac_sha1_hex(key, text):
    return hmac.new(key.encode(), text.encode(), hashlib.sha1).hexdigest()


class COSPostObject:
    """What the mock knows (its one key pair, bucket, clock) and what it stored."""

    def __init__(self, options):
        self.options = options
        self.objects = {}
        self.lock = threading.Lock()

    def now(self):
        return time.time() + self.options.clock_offset

    def accept(self, content_type, body):
        """Verifies one POST Object request; returns (key, fields, the file's MD5 hex)."""
        parts = parse_form(content_type, body)
        if not parts or parts[-1][0].lower() != "file" or parts[-1][1] is None:
            order = [part[0] for part in parts]
            raise Refusal(400, "InvalidArgument", f"the file must be the last form field, got {order}")
        fields = {}
        for name, filename, _, data in parts[:-1]:
            if filename is not None:
                raise Refusal(400, "InvalidArgument", f"only one file part may be sent, {name} is another")
            if name.lower() in fields:
                raise Refusal(400, "InvalidArgument", f"the form field {name} is sent twice")
            fields[name.lower()] = data.decode("utf-8")
        _, filename, _, data = parts[-1]
        encoded = fields.get("policy")
        if not encoded:
            raise Refusal(403, "AccessDenied", "the policy form field is required")
        try:
            text = base64.b64decode(encoded, validate=True).decode("utf-8")
            policy = json.loads(text)
        except (binascii.Error, ValueError):
            raise Refusal(400, "InvalidPolicyDocument", "the policy is not base64 of a JSON object")
        if not isinstance(policy, dict) or not isinstance(policy.get("conditions"), list):
            raise Refusal(400, "InvalidPolicyDocument", "You must provide condition if you specify a policy in post object request.")
        self.verify_signature(fields, text)
        self.verify_security_token(fields)
        expiration = policy_time(policy.get("expiration"))
        if expiration < self.now():
            raise Refusal(403, "AccessDenied", f"You post object request has been expired, expiration time: {expiration} but the time now : {int(self.now())}")
        for condition in policy["conditions"]:
            self.check(condition, fields, len(data))
        key = fields.get("key")
        if not key:
            raise Refusal(400, "InvalidArgument", "the key form field is required")
        key = key.replace("${filename}", filename)
        with self.lock:
            self.objects[key] = (data, fields.get("content-type") or "application/octet-stream")
        return key, fields, hashlib.md5(data).hexdigest()

    def verify_signature(self, fields, policy_text):
        if fields.get("q-sign-algorithm") != "sha1":
            raise Refusal(400, "InvalidArgument", "q-sign-algorithm must be sha1")
        if fields.get("q-ak") != self.options.access_key:
            raise Refusal(403, "InvalidAccessKeyId", "The access key Id format you provided is invalid.")
        key_time = fields.get("q-key-time", "")
        match = re.fullmatch(r"(\d+);(\d+)", key_time)
        if not match:
            raise Refusal(400, "InvalidArgument", f"q-key-time {key_time!r} is not start;end")
        if not int(match.group(1)) <= self.now() <= int(match.group(2)):
            raise Refusal(403, "AccessDenied", "Request has expired")
        sign_key = hmac_sha1_hex(self.options.secret_key, key_time)
        string_to_sign = hashlib.sha1(policy_text.encode()).hexdigest()
        expected = hmac_sha1_hex(sign_key, string_to_sign)
        if not hmac.compare_digest(fields.get("q-signature", ""), expected):
            raise Refusal(403, "SignatureDoesNotMatch", "The Signature you specified is invalid.")

    def verify_security_token(self, fields):
        token = fields.get("x-cos-security-token")
        if self.options.security_token is None and token is not None:
            raise Refusal(403, "InvalidAccessKeyId", "a security token was sent with a permanent SecretId")
        if self.options.security_token is not None and token != self.options.security_token:
            raise Refusal(403, "InvalidSecurityToken", "The security token you provided is invalid.")

    def check(self, condition, fields, size):
        """One policy condition against the form (COS: 403 AccessDenied naming the key)."""
        def value_of(name):
            name = name.lower()
            if name == "bucket":
                return self.options.bucket
            return fields.get("q-key-time" if name == "q-sign-time" else name)

        def failed(name):
            return Refusal(403, "AccessDenied", f"Condition key {name} doesn't match the value {value_of(name)}")

        if isinstance(condition, dict):
            for name, expected in condition.items():
                if value_of(name) != expected:
                    raise failed(name)
            return
        if not isinstance(condition, list) or not condition:
            raise Refusal(400, "InvalidPolicyDocument", f"a condition is neither a map nor a list: {condition!r}")
        operator = str(condition[0]).lower()
        if operator == "content-length-range":
            if len(condition) != 3 or not all(isinstance(bound, int) for bound in condition[1:]):
                raise Refusal(400, "InvalidPolicyDocument", f"content-length-range needs two integers: {condition}")
            if size > condition[2]:
                raise Refusal(400, "EntityTooLarge", f"Your proposed upload exceeds the maximum allowed size ({size} > {condition[2]}).")
            if size < condition[1]:
                raise Refusal(400, "EntityTooSmall", f"Your proposed upload is smaller than the minimum allowed size ({size} < {condition[1]}).")
            return
        if len(condition) != 3 or not str(condition[1]).startswith("$"):
            raise Refusal(400, "InvalidPolicyDocument", f"a condition must be [op, $field, value]: {condition}")
        name = condition[1][1:]
        actual = value_of(name)
        if operator == "eq":
            passed = actual == condition[2]
        elif operator == "starts-with":
            passed = (actual if actual is not None else "").startswith(condition[2])
        else:
            raise Refusal(400, "InvalidPolicyDocument", f"unknown condition {condition}")
        if not passed:
            raise failed(name)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    store = None

    def answer(self, status, body=b"", content_type="application/xml", headers=()):
        self.send_response(status)
        self.send_header("x-cos-request-id", uuid.uuid4().hex)
        if status != 204:
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if status != 204:
            self.wfile.write(body)

    def refuse(self, refusal):
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n<Error>\n'
            f"  <Code>{refusal.code}</Code>\n  <Message>{escape(refusal.message)}</Message>\n"
            f"  <Resource>{escape(self.store.options.bucket)}.cos.mock/</Resource>\n"
            f"  <RequestId>{uuid.uuid4().hex}</RequestId>\n  <TraceId>{uuid.uuid4().hex}</TraceId>\n"
            "</Error>\n").encode()
        self.answer(refusal.status, body)

    def do_POST(self):
        if "Transfer-Encoding" in self.headers or "Content-Length" not in self.headers:
            self.discard_chunked_body()
            self.close_connection = True
            return self.refuse(Refusal(411, "MissingContentLength", "You must provide the Content-Length HTTP header."))
        body = self.rfile.read(int(self.headers["Content-Length"]))
        try:
            key, fields, md5 = self.store.accept(self.headers.get("Content-Type"), body)
        except Refusal as refusal:
            return self.refuse(refusal)
        etag = ("ETag", f'"{md5}"')
        bucket = self.store.options.bucket
        location = f"http://{bucket}.cos.mock/{urllib.parse.quote(key)}"
        redirect = fields.get("success_action_redirect")
        if redirect:
            query = urllib.parse.urlencode({"bucket": bucket, "key": key, "etag": f'"{md5}"'})
            return self.answer(303, headers=[etag, ("Location", f"{redirect}?{query}")])
        status = fields.get("success_action_status")
        if status == "200":
            return self.answer(200, headers=[etag, ("Location", location)])
        if status == "201":
            body = (
                '<?xml version="1.0" encoding="UTF-8"?>\n<PostResponse>\n'
                f"  <Location>{escape(location)}</Location>\n  <Bucket>{escape(bucket)}</Bucket>\n"
                f"  <Key>{escape(key)}</Key>\n  <ETag>\"{md5}\"</ETag>\n</PostResponse>\n").encode()
            return self.answer(201, body, headers=[etag, ("Location", location)])
        self.answer(204, headers=[etag, ("Location", location)])

    def discard_chunked_body(self):
        """Reads a chunked body to its end, so the 411 reaches a client still sending it."""
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                break
            self.rfile.read(size + 2)
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass

    def do_GET(self):
        key = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path[1:])
        with self.store.lock:
            stored = self.store.objects.get(key)
            listing = sorted((name, len(data)) for name, (data, _) in self.store.objects.items())
        if not key:
            contents = "".join(f"  <Contents><Key>{escape(name)}</Key><Size>{size}</Size></Contents>\n"
                               for name, size in listing)
            body = ('<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult>\n'
                    f"  <Name>{escape(self.store.options.bucket)}</Name>\n{contents}</ListBucketResult>\n")
            return self.answer(200, body.encode())
        if stored is None:
            return self.refuse(Refusal(404, "NoSuchKey", "The specified key does not exist."))
        self.answer(200, stored[0], content_type=stored[1])

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser(description="A verifying Tencent COS POST Object mock.")
    parser.add_argument("--access-key", required=True, help="the SecretId (q-ak)")
    parser.add_argument("--secret-key", required=True)
    parser.add_argument("--bucket", required=True, help="BucketName-APPID")
    parser.add_argument("--region", help="accepted for the common mock command line; unused")
    parser.add_argument("--clock-offset", type=float, default=0, help="seconds added to the mock's clock")
    parser.add_argument("--security-token", help="the temporary key's token x-cos-security-token must carry")
    Handler.store = COSPostObject(parser.parse_args())
    # A test runner may start the mock with SIGTERM blocked; its stop() sends SIGTERM.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"listening on 127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
