"""A verifying S3 POST-object endpoint for FormGate's tests.

moto (the real S3 implementation the round trips use) stores what it is sent but does not
check a POST form's signature or policy. This endpoint checks what AWS documents for
"Browser-Based Uploads Using POST (AWS Signature Version 4)" and "Creating a POST Policy":

- the body has a Content-Length (411 MissingContentLength for a chunked body, as S3);
- the body is multipart/form-data; the part named `file` is there and is the last part (S3
  ignores fields after it: they are refused here with 400 InvalidArgument to make misuse
  visible);
- `x-amz-algorithm` is AWS4-HMAC-SHA256; `x-amz-credential` is AK/yyyymmdd/REGION/s3/aws4_request
  with this endpoint's access key and region and the date of `x-amz-date`; with --session-token,
  `x-amz-security-token` is that token (403 InvalidToken);
- `x-amz-signature` is the hex HMAC-SHA256 of the base64 `policy` field under the SigV4
  signing key (403 SignatureDoesNotMatch);
- the policy decodes (400 InvalidPolicyDocument), its `expiration` is after now + --clock-offset
  (403 AccessDenied "Policy expired"), and every condition holds: `{"field": value}` and
  `["eq", "$field", value]` exactly, `["starts-with", "$field", prefix]` (an empty prefix allows
  any value; for Content-Type each comma-separated type must start with it), `$bucket` against
  the bucket, `["content-length-range", min, max]` on the file's byte count (400 EntityTooSmall /
  EntityTooLarge); a failed field condition is 403 AccessDenied;
- every form field except file, policy, x-amz-signature and x-ignore-* is named by a condition
  (403 AccessDenied "Extra input fields").

Field names are matched without regard to case; values exactly. Errors are S3's XML
<Error><Code>…</Code><Message>…</Message></Error>. A form that passes is stored (the file spooled
to a temporary directory, never held in memory) under `key` (`${filename}` replaced by the file's
name) with the `Content-Type` field as its type (else the file part's, else
binary/octet-stream), and answered 204, or `success_action_status` 200 or 201 (201 with S3's
PostResponse XML). `GET /BUCKET/KEY` returns an object's bytes and Content-Type;
`GET /_mock/posts` returns, as JSON, every POST received: its fields in order (name, value), the
file's name, type, size and sha256, the names of parts after the file, the answer's status and
code, and the stored key.

Usage: s3_post_mock.py --access-key AK --secret-key SK --region R --bucket B [--clock-offset S]
                      [--session-token T]
Listens on 127.0.0.1 on a free port and prints `listening on 127.0.0.1:PORT` on stderr. POST /B
(path style) and POST / (the bucket is the only bucket) upload."""
import argparse
import base64
import binascii
import datetime
import email.message
import hashlib
import hmac
import http.server
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import urllib.parse
from xml.sax.saxutils import escape

CHUNK = 1 << 20
MAX_PART_HEAD = 8192
# S3 refuses a form whose fields before the file exceed 20 KB (MaxPostPreDataLengthExceeded).
MAX_PRE_DATA = 20 * 1024


class Refusal(Exception):
    """An S3 error answer: HTTP status, S3 error code, message."""

    def __init__(self, status, code, message):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class Upload:
    """One parsed form: fields before the file, the file (spooled), names of parts after it."""

    def __init__(self):
        self.fields = []
        self.file = None
        self.after_file = []


class BodyReader:
    """At most `length` bytes of a request body, in chunks."""

    def __init__(self, stream, length):
        self.stream, self.left = stream, length

    def read(self):
        if self.left <= 0:
            return b""
        chunk = self.stream.read(min(CHUNK, self.left))
        if not chunk:
            raise Refusal(400, "IncompleteBody", "The body ended before its Content-Length.")
        self.left -= len(chunk)
        return chunk

    def drain(self):
        while self.read():
            pass


def malformed(detail):
    return Refusal(400, "MalformedPOSTRequest",
                   "The body of your POST request is not well-formed multipart/form-data: " + detail)


def parse_form(reader, boundary, spool_dir):
    """Streams a multipart body: fields kept (20 KB at most before the file), the file part
    written to a temporary file with its size and sha256, parts after it named."""
    delimiter = b"\r\n--" + boundary
    buffer = bytearray(b"\r\n")

    def fill():
        chunk = reader.read()
        if not chunk:
            raise malformed("no closing delimiter")
        buffer.extend(chunk)

    def take_until(marker, sink):
        """Moves bytes before `marker` into `sink` (a callable), drops the marker."""
        while True:
            index = buffer.find(marker)
            if index >= 0:
                sink(bytes(buffer[:index]))
                del buffer[:index + len(marker)]
                return
            keep = len(marker) - 1
            if len(buffer) > keep:
                sink(bytes(buffer[:len(buffer) - keep]))
                del buffer[:len(buffer) - keep]
            fill()

    upload = Upload()
    take_until(delimiter, lambda data: None)
    pre_data = [0]

    def count_pre_data(amount):
        pre_data[0] += amount
        if pre_data[0] > MAX_PRE_DATA:
            raise Refusal(400, "MaxPostPreDataLengthExceeded",
                          "Your POST request fields preceding the upload file were too large.")

    while True:
        while len(buffer) < 2:
            fill()
        if buffer[:2] == b"--":
            reader.drain()
            return upload
        while buffer[:1] in (b" ", b"\t"):
            del buffer[:1]
            while len(buffer) < 2:
                fill()
        if buffer[:2] != b"\r\n":
            raise malformed("no line break after a delimiter")
        del buffer[:2]
        head = bytearray()

        def add_head(data):
            head.extend(data)
            if len(head) > MAX_PART_HEAD:
                raise malformed("a part head over 8 KiB")

        take_until(b"\r\n\r\n", add_head)
        message = email.message.Message()
        try:
            head_text = head.decode("utf-8")
        except UnicodeDecodeError:
            head_text = head.decode("latin-1")
        for line in head_text.split("\r\n"):
            name, colon, value = line.partition(":")
            if not colon:
                raise malformed("a part header without ':'")
            message[name.strip()] = value.strip()
        if message.get("Content-Disposition") is None:
            raise malformed("a part without Content-Disposition")
        name = message.get_param("name", header="content-disposition")
        filename = message.get_param("filename", header="content-disposition")
        if name is None:
            raise malformed("a part without a name")
        if upload.file is not None:
            upload.after_file.append(name)
            take_until(delimiter, lambda data: None)
        elif name.lower() == "file":
            spool = tempfile.NamedTemporaryFile(dir=spool_dir, delete=False)
            sha256, md5, size = hashlib.sha256(), hashlib.md5(), [0]

            def write(data):
                spool.write(data)
                sha256.update(data)
                md5.update(data)
                size[0] += len(data)

            with spool:
                take_until(delimiter, write)
            upload.file = {"name": name, "filename": filename, "content_type": message.get("Content-Type"),
                           "size": size[0], "sha256": sha256.hexdigest(), "md5": md5.hexdigest(),
                           "path": spool.name}
        else:
            value = bytearray()
            count_pre_data(len(head))

            def keep(data):
                value.extend(data)
                count_pre_data(len(data))

            take_until(delimiter, keep)
            try:
                upload.fields.append((name, value.decode("utf-8")))
            except UnicodeDecodeError:
                raise malformed(f"field {name} is not UTF-8") from None


def signing_key(secret, date, region):
    key = ("AWS4" + secret).encode()
    for part in (date, region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def parse_expiration(text):
    for layout in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            moment = datetime.datetime.strptime(text, layout)
            return moment.replace(tzinfo=datetime.timezone.utc).timestamp()
        except (TypeError, ValueError):
            continue
    raise Refusal(400, "InvalidPolicyDocument", f"Invalid Policy: Invalid 'expiration' value: '{text}'")


class Verifier:
    """The checks S3 makes on a POST form, in the order of the module's docstring."""

    def __init__(self, options):
        self.options = options

    def verify(self, upload):
        """The form's fields by lower-cased name, once every check passed."""
        if upload.file is None:
            raise Refusal(400, "InvalidArgument", "POST requires exactly one file upload per request.")
        if upload.after_file:
            raise Refusal(400, "InvalidArgument",
                          f"Field {upload.after_file[0]} follows the file (S3 ignores fields after the file).")
        fields = {}
        for name, value in upload.fields:
            if name.lower() in fields:
                raise Refusal(400, "InvalidArgument", f"Field {name} appears more than once.")
            fields[name.lower()] = value
        policy_text = fields.get("policy")
        if policy_text is None:
            raise Refusal(403, "AccessDenied", "Access Denied (a form without a policy is anonymous).")
        if fields.get("x-amz-algorithm") != "AWS4-HMAC-SHA256":
            raise Refusal(400, "InvalidArgument",
                          f"Unsupported x-amz-algorithm: '{fields.get('x-amz-algorithm')}'.")
        date = self.check_credential(fields)
        token = self.options.session_token
        if token is not None and not hmac.compare_digest(token, fields.get("x-amz-security-token", "")):
            raise Refusal(403, "InvalidToken", "The provided token is malformed or otherwise invalid.")
        expected = hmac.new(signing_key(self.options.secret_key, date, self.options.region),
                            policy_text.encode(), hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, fields.get("x-amz-signature", "")):
            raise Refusal(403, "SignatureDoesNotMatch",
                          "The request signature we calculated does not match the signature you provided.")
        policy = self.decode_policy(policy_text)
        now = time.time() + self.options.clock_offset
        if parse_expiration(policy.get("expiration")) <= now:
            raise Refusal(403, "AccessDenied", "Invalid according to Policy: Policy expired.")
        covered = {"file", "policy", "x-amz-signature"}
        for condition in policy["conditions"]:
            covered.add(self.check_condition(condition, fields, upload.file["size"]))
        extra = [name for name, _ in upload.fields
                 if name.lower() not in covered and not name.lower().startswith("x-ignore-")]
        if extra:
            raise Refusal(403, "AccessDenied", "Invalid according to Policy: Extra input fields: " + extra[0])
        if not fields.get("key"):
            raise Refusal(400, "InvalidArgument", "Bucket POST must contain a field named 'key'.")
        return fields

    def check_credential(self, fields):
        """The credential's scope date, once it names this endpoint's key, region and service."""
        credential = fields.get("x-amz-credential", "")
        amz_date = fields.get("x-amz-date", "")
        scope = credential.split("/")
        if len(scope) != 5 or scope[3] != "s3" or scope[4] != "aws4_request":
            raise Refusal(400, "AuthorizationHeaderMalformed", f"Malformed x-amz-credential: '{credential}'.")
        access_key, date, region = scope[0], scope[1], scope[2]
        if access_key != self.options.access_key:
            raise Refusal(403, "InvalidAccessKeyId",
                          "The AWS Access Key Id you provided does not exist in our records.")
        if region != self.options.region:
            raise Refusal(400, "AuthorizationHeaderMalformed",
                          f"the region '{region}' is wrong; expecting '{self.options.region}'")
        try:
            datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ")
        except ValueError:
            raise Refusal(400, "InvalidArgument", f"Malformed x-amz-date: '{amz_date}'.") from None
        if date != amz_date[:8]:
            raise Refusal(400, "AuthorizationHeaderMalformed",
                          f"The credential's date {date} is not the date of x-amz-date {amz_date}.")
        return date

    @staticmethod
    def decode_policy(text):
        try:
            policy = json.loads(base64.b64decode(text, validate=True))
        except (binascii.Error, ValueError):
            raise Refusal(400, "InvalidPolicyDocument", "Invalid Policy: Invalid JSON.") from None
        if not isinstance(policy, dict) or not isinstance(policy.get("conditions"), list):
            raise Refusal(400, "InvalidPolicyDocument", "Invalid Policy: Policy missing conditions.")
        if "expiration" not in policy:
            raise Refusal(400, "InvalidPolicyDocument", "Invalid Policy: Policy missing expiration.")
        return policy

    def check_condition(self, condition, fields, size):
        """Checks one condition; returns the (lower-case) form field it allows."""
        failed = Refusal(403, "AccessDenied",
                         "Invalid according to Policy: Policy Condition failed: " + json.dumps(condition))
        if isinstance(condition, dict) and len(condition) == 1:
            (name, value), = condition.items()
            operator = "eq"
        elif isinstance(condition, list) and len(condition) == 3 and isinstance(condition[0], str):
            operator = condition[0].lower()
            if operator == "content-length-range":
                low, high = condition[1], condition[2]
                if not all(isinstance(bound, int) and not isinstance(bound, bool) for bound in (low, high)):
                    raise Refusal(400, "InvalidPolicyDocument", "Invalid Policy: content-length-range bounds.")
                if size < low:
                    raise Refusal(400, "EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size")
                if size > high:
                    raise Refusal(400, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size")
                return "content-length-range"
            if operator not in ("eq", "starts-with") or not isinstance(condition[1], str) \
                    or not condition[1].startswith("$"):
                raise Refusal(400, "InvalidPolicyDocument",
                              "Invalid Policy: Invalid Condition: " + json.dumps(condition))
            name, value = condition[1][1:], condition[2]
        else:
            raise Refusal(400, "InvalidPolicyDocument", "Invalid Policy: Invalid Condition: " + json.dumps(condition))
        if not isinstance(value, str):
            raise Refusal(400, "InvalidPolicyDocument", "Invalid Policy: Invalid Condition: " + json.dumps(condition))
        name = name.lower()
        actual = self.options.bucket if name == "bucket" else fields.get(name)
        if operator == "eq":
            holds = actual == value
        elif name == "content-type" and actual is not None:
            holds = all(kind.strip().startswith(value) for kind in actual.split(","))
        else:
            holds = (actual if actual is not None else "").startswith(value)
        if not holds:
            raise failed
        return name


class Store:
    """Objects on disk by key, with their Content-Type; every POST's record."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="s3-post-mock-")
        self.objects = {}
        self.posts = []
        self.lock = threading.Lock()

    def put(self, key, spooled, content_type):
        path = os.path.join(self.directory, hashlib.sha256(key.encode()).hexdigest())
        os.replace(spooled, path)
        with self.lock:
            self.objects[key] = (path, content_type)

    def record(self, entry):
        with self.lock:
            self.posts.append(entry)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def answer(self, status, body=b"", content_type="application/xml", headers=()):
        self.send_response(status)
        if body or status not in (204, 304):
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def refuse(self, refusal):
        xml = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{refusal.code}</Code>'
               f"<Message>{escape(refusal.message)}</Message><RequestId>mock</RequestId></Error>")
        self.answer(refusal.status, xml.encode())

    def bucket_path(self):
        """The object key part of a path-style URL, or None when it names another bucket."""
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if path == "/":
            return ""
        bucket, _, key = path[1:].partition("/")
        return key if bucket == OPTIONS.bucket else None

    def do_POST(self):
        record = {"path": self.path, "fields": [], "file": None, "after_file": [], "key": None,
                  "chunked": "Transfer-Encoding" in self.headers}
        try:
            self.post(record)
        except Refusal as refusal:
            record["status"], record["code"] = refusal.status, refusal.code
            self.refuse(refusal)
        STORE.record(record)

    def post(self, record):
        if record["chunked"] or self.headers.get("Content-Length") is None:
            self.close_connection = True
            raise Refusal(411, "MissingContentLength", "You must provide the Content-Length HTTP header.")
        try:
            length = int(self.headers["Content-Length"])
        except ValueError:
            self.close_connection = True
            raise Refusal(400, "InvalidArgument", "Content-Length is not a number.") from None
        reader = BodyReader(self.rfile, length)
        if self.bucket_path() != "":
            reader.drain()
            raise Refusal(404, "NoSuchBucket", "The specified bucket does not exist")
        kind = email.message.Message()
        kind["Content-Type"] = self.headers.get("Content-Type", "")
        boundary = kind.get_param("boundary")
        if kind.get_content_type() != "multipart/form-data" or not boundary:
            reader.drain()
            raise Refusal(412, "PreconditionFailed",
                          "Bucket POST must be of the enclosure-type multipart/form-data")
        upload = None
        try:
            try:
                upload = parse_form(reader, boundary.encode("latin-1"), STORE.directory)
            except Refusal:
                self.close_connection = True
                raise
            record["fields"] = [[name, value] for name, value in upload.fields]
            record["after_file"] = upload.after_file
            if upload.file:
                record["file"] = {name: upload.file[name] for name in ("filename", "content_type", "size", "sha256")}
            fields = Verifier(OPTIONS).verify(upload)
            key = fields["key"].replace("${filename}", upload.file["filename"] or "")
            content_type = fields.get("content-type") or upload.file["content_type"] or "binary/octet-stream"
            STORE.put(key, upload.file["path"], content_type)
        finally:
            if upload and upload.file and os.path.exists(upload.file["path"]):
                os.unlink(upload.file["path"])
        record["key"] = key
        status = fields.get("success_action_status")
        status = int(status) if status in ("200", "201") else 204
        record["status"], record["code"] = status, None
        location = f"http://{self.headers.get('Host', '')}/{OPTIONS.bucket}/{urllib.parse.quote(key)}"
        etag = '"' + upload.file["md5"] + '"'
        body = b""
        if status == 201:
            body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<PostResponse><Location>{escape(location)}'
                    f"</Location><Bucket>{escape(OPTIONS.bucket)}</Bucket><Key>{escape(key)}</Key>"
                    f"<ETag>{escape(etag)}</ETag></PostResponse>").encode()
        self.answer(status, body, headers=[("ETag", etag), ("Location", location)])

    def do_GET(self):
        if urllib.parse.urlsplit(self.path).path == "/_mock/posts":
            with STORE.lock:
                data = json.dumps(STORE.posts).encode()
            return self.answer(200, data, "application/json")
        key = self.bucket_path()
        with STORE.lock:
            found = STORE.objects.get(key) if key else None
        if found is None:
            return self.refuse(Refusal(404, "NoSuchKey", "The specified key does not exist."))
        path, content_type = found
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(os.path.getsize(path)))
        self.end_headers()
        with open(path, "rb") as stored:
            shutil.copyfileobj(stored, self.wfile, CHUNK)

    def log_message(self, *args):
        pass


def options():
    parser = argparse.ArgumentParser(description="A verifying S3 POST-object endpoint.")
    parser.add_argument("--access-key", required=True)
    parser.add_argument("--secret-key", required=True)
    parser.add_argument("--region", required=True)
    parser.add_argument("--bucket", required=True)
    parser.add_argument("--clock-offset", type=float, default=0.0,
                        help="seconds added to the clock when judging the policy's expiration")
    parser.add_argument("--session-token", help="temporary credentials: the x-amz-security-token required")
    return parser.parse_args()


OPTIONS = options()
STORE = Store()
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
# SIGTERM ends the server with its stored objects removed; a test runner's child may inherit
# SIGTERM blocked, which would leave only SIGKILL (and the temporary directory behind).
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
print(f"listening on 127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
try:
    server.serve_forever()
finally:
    shutil.rmtree(STORE.directory, ignore_errors=True)
