"""A verifying Aliyun OSS PostObject endpoint for FormGate's tests, written from Aliyun's
PostObject documentation (form elements, "POST V1 signature", "POST V4 signature", the policy
appendix and the PostObject error pages); no SDK code.

Usage: oss_post_mock.py --access-key AK --secret-key SK --bucket B [--region R]
                        [--clock-offset SECONDS] [--security-token TOKEN]

Listens on 127.0.0.1:0 and prints `listening on 127.0.0.1:PORT` on stderr; serves requests
concurrently over HTTP/1.1.

POST (any path) checks, as OSS does, and stores the object:
- a Content-Length (411 MissingContentLength for a chunked body, read to its end first so
  the answer reaches a client still sending);
- a multipart/form-data body whose last part is the `file` part (400 InvalidArgument otherwise;
  OSS reads no field after the file); form field names are case-insensitive;
- V1 (no `x-oss-signature-version`): `OSSAccessKeyId` is AK and `Signature` is base64
  HMAC-SHA1(SK, the base64 policy);
- V4: `x-oss-signature-version` OSS4-HMAC-SHA256, `x-oss-credential`
  AK/yyyymmdd/region/oss/aliyun_v4_request (region = --region when given), `x-oss-date`
  (yyyymmddTHHMMSSZ, the credential's day, at most 15 minutes ahead of now and at most 7 days
  old) and `x-oss-signature` = hex HMAC-SHA256 of the base64 policy with the key chain
  HMAC("aliyun_v4" + SK, date) -> region -> "oss" -> "aliyun_v4_request"; the policy must carry
  conditions on those three signing fields;
- `x-oss-security-token`: with --security-token it is required and must match; without, a token
  is refused (the mock's AK is a permanent key);
- the policy's `expiration` is after now (+ --clock-offset);
- every condition: {"field": value} (exact), ["eq", "$f", v], ["starts-with", "$f", prefix],
  ["in", "$f", [..]], ["not-in", "$f", [..]] against the form fields (`bucket` against B), and
  ["content-length-range", min, max] against the file's byte count.
The object's Content-Type is the `x-oss-content-type` field when sent (Aliyun documents it as
taking precedence over the file part's), else a `Content-Type` field (Aliyun lists it among the
headers a form may set; the mock lets it win over the part's, the reading a proxy must defend
against), else the file part's own, else application/octet-stream.
`${filename}` in the key is replaced by the file's name. Success: 204, or
`success_action_status` 200 (empty) / 201 (a PostResponse XML), or 303 to
`success_action_redirect`. Errors: OSS's XML
<Error><Code>..</Code><Message>..</Message>...</Error> with its codes.

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

V4_ALGORITHM = "OSS4-HMAC-SHA256"
DATE_SKEW_SECONDS = 15 * 60
V4_MAX_AGE_SECONDS = 7 * 24 * 3600
PARAMETER = re.compile(r';\s*([A-Za-z0-9_*.-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^;]*)')


class Refusal(Exception):
    """An answer OSS gives instead of storing: an HTTP status, an OSS error code, a message."""

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


def hmac_sha256(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


class OSSPostObject:
    """What the mock knows (its one key pair, bucket, region, clock) and what it stored."""

    def __init__(self, options):
        self.options = options
        self.objects = {}
        self.lock = threading.Lock()

    def now(self):
        return time.time() + self.options.clock_offset

    def accept(self, content_type, body):
        """Verifies one PostObject request; returns (key, fields, the file's MD5 hex)."""
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
        _, filename, part_type, data = parts[-1]
        encoded = fields.get("policy")
        if not encoded:
            raise Refusal(403, "AccessDenied", "the policy form field is required")
        try:
            policy = json.loads(base64.b64decode(encoded, validate=True))
        except (binascii.Error, ValueError):
            raise Refusal(400, "InvalidPolicyDocument", "the policy is not base64 of a JSON object")
        if not isinstance(policy, dict) or not isinstance(policy.get("conditions"), list):
            raise Refusal(400, "InvalidPolicyDocument", "the policy needs expiration and conditions")
        if "x-oss-signature-version" in fields:
            self.verify_v4(fields, encoded, policy)
        else:
            self.verify_v1(fields, encoded)
        self.verify_security_token(fields)
        if policy_time(policy.get("expiration")) < self.now():
            raise Refusal(403, "AccessDenied", "Invalid according to Policy: Policy expired.")
        for condition in policy["conditions"]:
            self.check(condition, fields, len(data))
        key = fields.get("key")
        if not key:
            raise Refusal(400, "InvalidArgument", "the key form field is required")
        key = key.replace("${filename}", filename)
        stored_type = (fields.get("x-oss-content-type") or fields.get("content-type") or part_type
                       or "application/octet-stream")
        with self.lock:
            self.objects[key] = (data, stored_type)
        return key, fields, hashlib.md5(data).hexdigest()

    def verify_v1(self, fields, encoded):
        if fields.get("ossaccesskeyid") != self.options.access_key:
            raise Refusal(403, "InvalidAccessKeyId", "The OSS Access Key Id you provided does not exist in our records.")
        expected = base64.b64encode(
            hmac.new(self.options.secret_key.encode(), encoded.encode(), hashlib.sha1).digest()).decode()
        if not hmac.compare_digest(fields.get("signature", ""), expected):
            raise Refusal(403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided.")

    def verify_v4(self, fields, encoded, policy):
        if fields["x-oss-signature-version"] != V4_ALGORITHM:
            raise Refusal(400, "InvalidArgument", f"x-oss-signature-version must be {V4_ALGORITHM}")
        scope = fields.get("x-oss-credential", "").split("/")
        if len(scope) != 5 or scope[3] != "oss" or scope[4] != "aliyun_v4_request":
            raise Refusal(400, "InvalidArgument", "x-oss-credential must be AK/yyyymmdd/region/oss/aliyun_v4_request")
        access_key, day, region = scope[:3]
        if access_key != self.options.access_key:
            raise Refusal(403, "InvalidAccessKeyId", "The OSS Access Key Id you provided does not exist in our records.")
        if self.options.region and region != self.options.region:
            raise Refusal(400, "InvalidArgument", f"the credential's region {region} is not {self.options.region}")
        stamp = fields.get("x-oss-date", "")
        try:
            signed_at = calendar.timegm(time.strptime(stamp, "%Y%m%dT%H%M%SZ"))
        except ValueError:
            raise Refusal(400, "InvalidArgument", f"x-oss-date {stamp!r} is not yyyymmddTHHMMSSZ")
        if stamp[:8] != day:
            raise Refusal(400, "InvalidArgument", "x-oss-date is not the day of x-oss-credential")
        if signed_at > self.now() + DATE_SKEW_SECONDS or self.now() - signed_at > V4_MAX_AGE_SECONDS:
            raise Refusal(403, "AccessDenied", "x-oss-date is more than 15 minutes ahead or 7 days old")
        pinned = {name.lower() for condition in policy["conditions"] if isinstance(condition, dict)
                  for name in condition}
        missing = {"x-oss-signature-version", "x-oss-credential", "x-oss-date"} - pinned
        if missing:
            raise Refusal(400, "InvalidPolicyDocument", f"the policy must pin {sorted(missing)}")
        key = ("aliyun_v4" + self.options.secret_key).encode()
        for step in (day, region, "oss", "aliyun_v4_request"):
            key = hmac_sha256(key, step)
        expected = hmac.new(key, encoded.encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(fields.get("x-oss-signature", ""), expected):
            raise Refusal(403, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided.")

    def verify_security_token(self, fields):
        token = fields.get("x-oss-security-token")
        if self.options.security_token is None and token is not None:
            raise Refusal(403, "InvalidAccessKeyId", "a security token was sent with a permanent AccessKey")
        if self.options.security_token is not None and token != self.options.security_token:
            raise Refusal(403, "InvalidSecurityToken", "The security token you provided is invalid.")

    def check(self, condition, fields, size):
        """One policy condition against the form (OSS: 403 AccessDenied naming it)."""
        def value_of(name):
            name = name.lower()
            return self.options.bucket if name == "bucket" else fields.get(name)

        failed = Refusal(403, "AccessDenied", f"Invalid according to Policy: Policy Condition failed: {json.dumps(condition)}")
        if isinstance(condition, dict):
            for name, expected in condition.items():
                if value_of(name) != expected:
                    raise failed
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
        actual, expected = value_of(condition[1][1:]), condition[2]
        if operator == "eq":
            passed = actual == expected
        elif operator == "starts-with":
            passed = (actual if actual is not None else "").startswith(expected)
        elif operator in ("in", "not-in") and isinstance(expected, list):
            passed = (actual in expected) == (operator == "in")
        else:
            raise Refusal(400, "InvalidPolicyDocument", f"unknown condition {condition}")
        if not passed:
            raise failed


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    store = None

    def answer(self, status, body=b"", content_type="application/xml", headers=()):
        self.send_response(status)
        self.send_header("x-oss-request-id", uuid.uuid4().hex.upper()[:24])
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
        request_id = uuid.uuid4().hex.upper()[:24]
        body = (
            '<?xml version="1.0" encoding="UTF-8"?>\n<Error>\n'
            f"  <Code>{refusal.code}</Code>\n  <Message>{escape(refusal.message)}</Message>\n"
            f"  <RequestId>{request_id}</RequestId>\n"
            f"  <HostId>{escape(self.store.options.bucket)}.oss-mock.local</HostId>\n</Error>\n").encode()
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
        etag = ("ETag", f'"{md5.upper()}"')
        redirect = fields.get("success_action_redirect")
        if redirect:
            query = urllib.parse.urlencode({"bucket": self.store.options.bucket, "key": key, "etag": md5.upper()})
            return self.answer(303, headers=[etag, ("Location", f"{redirect}?{query}")])
        status = fields.get("success_action_status")
        if status == "200":
            return self.answer(200, headers=[etag])
        if status == "201":
            bucket = escape(self.store.options.bucket)
            body = (
                '<?xml version="1.0" encoding="UTF-8"?>\n<PostResponse>\n'
                f"  <Bucket>{bucket}</Bucket>\n  <Location>http://{bucket}.oss-mock.local/{escape(urllib.parse.quote(key))}</Location>\n"
                f"  <Key>{escape(key)}</Key>\n  <ETag>\"{md5.upper()}\"</ETag>\n</PostResponse>\n").encode()
            return self.answer(201, body, headers=[etag])
        self.answer(204, headers=[etag])

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
        path = urllib.parse.urlsplit(self.path).path
        key = urllib.parse.unquote(path[1:])
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
    parser = argparse.ArgumentParser(description="A verifying Aliyun OSS PostObject mock.")
    parser.add_argument("--access-key", required=True)
    parser.add_argument("--secret-key", required=True)
    parser.add_argument("--bucket", required=True)
    parser.add_argument("--region", help="the V4 credential's region (any when absent)")
    parser.add_argument("--clock-offset", type=float, default=0, help="seconds added to the mock's clock")
    parser.add_argument("--security-token", help="the STS token x-oss-security-token must carry")
    Handler.store = OSSPostObject(parser.parse_args())
    # A test runner may start the mock with SIGTERM blocked; its stop() sends SIGTERM.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"listening on 127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
