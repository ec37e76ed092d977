"""What FormGate's verifying POST-object mocks share: s3_post_mock.py (AWS S3), oss_post_mock.py
(Aliyun OSS) and cos_post_mock.py (Tencent COS) keep only their store's rules (the signature, the
policy checks, the field names, the error codes and the shape of the answers) and take the rest
from here:

- `Refusal`, the error answer a check raises: an HTTP status, the store's error code, a message;
- `read_form`, a streaming multipart/form-data reader: the text fields before the file kept in
  order, the file part spooled to a temporary file with its size, SHA-256 and MD5, the parts
  after it read past and named;
- `ObjectStore`, the stored objects by key in one temporary directory, and a record of every POST;
- `PostObjectHandler`, the HTTP/1.1 side: answers, XML documents, a body's reader (411 without a
  Content-Length), an object streamed back, the listing of a bucket;
- the OSS and COS common ground: `SingleFilePostHandler` (POST on any path, the success answers,
  GET / and GET /KEY), the file last and alone, the policy document, its time format, its
  conditions, the security token;
- `command_line` and `serve`: the common flags, and the server on a free loopback port that prints
  `listening on 127.0.0.1:PORT` on stderr and removes its directory on SIGTERM.

The mocks are started as `python3 path/to/x_mock.py …`, which puts this directory on sys.path."""
import argparse
import base64
import binascii
import calendar
import email.message
import hashlib
import http.server
import json
import os
import re
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


class Refusal(Exception):
    """A store's error answer: HTTP status, the store's error code, message."""

    def __init__(self, status, code, message):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def now(options):
    """The mock's clock: the real one plus --clock-offset seconds."""
    return time.time() + options.clock_offset


# --- the form --------------------------------------------------------------------------------

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


class FilePart:
    """The file part of a form, spooled to `path`: its field name, filename and Content-Type,
    its byte count and its SHA-256 and MD5 (hex)."""

    def __init__(self, name, filename, content_type, directory):
        self.name, self.filename, self.content_type = name, filename, content_type
        self.spool = tempfile.NamedTemporaryFile(dir=directory, delete=False)
        self.path = self.spool.name
        self.size, self.sha256, self.md5 = 0, None, None
        self.digests = hashlib.sha256(), hashlib.md5()

    def write(self, data):
        self.spool.write(data)
        for digest in self.digests:
            digest.update(data)
        self.size += len(data)

    def close(self):
        """Ends the spool; `sha256` and `md5` are known from here on."""
        self.spool.close()
        self.sha256, self.md5 = (digest.hexdigest() for digest in self.digests)


class Form:
    """One parsed form: the text fields before the file as (name, value) in order, the file (a
    `FilePart`, or None when no part was one) and the (name, filename) of each part after it."""

    def __init__(self):
        self.fields = []
        self.file = None
        self.after_file = []

    def discard(self):
        """Removes the spooled file unless it was stored (moved away)."""
        if self.file is not None and os.path.exists(self.file.path):
            os.unlink(self.file.path)


def malformed(detail):
    return Refusal(400, "MalformedPOSTRequest",
                   "The body of your POST request is not well-formed multipart/form-data: " + detail)


def multipart_boundary(content_type):
    """The boundary of a multipart/form-data Content-Type, None for any other type."""
    kind = email.message.Message()
    kind["Content-Type"] = content_type or ""
    boundary = kind.get_param("boundary")
    return boundary if kind.get_content_type() == "multipart/form-data" and boundary else None


def read_form(reader, boundary, directory, is_file, pre_data_limit=None):
    """Streams a multipart body from `reader` (a `BodyReader`) to its end. The first part for
    which `is_file(name, filename)` holds is spooled to a temporary file in `directory`; the
    text fields before it are kept (with `pre_data_limit`, at most that many bytes of them,
    heads included: S3's MaxPostPreDataLengthExceeded); the parts after it are read past.
    A body that is not well-formed (no closing delimiter, a part head over 8 KiB or without a
    name, a field that is not UTF-8) is a 400 MalformedPOSTRequest `Refusal`."""
    delimiter = b"\r\n--" + boundary.encode("latin-1")
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

    form = Form()
    take_until(delimiter, lambda data: None)
    pre_data = [0]

    def count_pre_data(amount):
        pre_data[0] += amount
        if pre_data_limit is not None and pre_data[0] > pre_data_limit:
            raise Refusal(400, "MaxPostPreDataLengthExceeded",
                          "Your POST request fields preceding the upload file were too large.")

    while True:
        while len(buffer) < 2:
            fill()
        if buffer[:2] == b"--":
            reader.drain()
            return form
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
        message = part_head(head)
        name = message.get_param("name", header="content-disposition")
        filename = message.get_param("filename", header="content-disposition")
        if name is None:
            raise malformed("a part without a name")
        if form.file is not None:
            form.after_file.append((name, filename))
            take_until(delimiter, lambda data: None)
        elif is_file(name, filename):
            form.file = FilePart(name, filename, message.get("Content-Type"), directory)
            try:
                take_until(delimiter, form.file.write)
            finally:
                form.file.close()
        else:
            value = bytearray()
            count_pre_data(len(head))

            def keep(data):
                value.extend(data)
                count_pre_data(len(data))

            take_until(delimiter, keep)
            try:
                form.fields.append((name, value.decode("utf-8")))
            except UnicodeDecodeError:
                raise malformed(f"field {name} is not UTF-8") from None


def part_head(head):
    """A part's header lines (UTF-8, else Latin-1) as a message with a Content-Disposition."""
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
    return message


# --- the objects -----------------------------------------------------------------------------

class ObjectStore:
    """Objects on disk by key, each with its Content-Type, in one temporary directory (spooled
    files are written there too, so storing one is a rename); and every POST's record."""

    def __init__(self, prefix):
        self.directory = tempfile.mkdtemp(prefix=prefix)
        self.objects = {}
        self.posts = []
        self.lock = threading.Lock()

    def put(self, key, spooled, content_type):
        path = os.path.join(self.directory, hashlib.sha256(key.encode()).hexdigest())
        os.replace(spooled, path)
        with self.lock:
            self.objects[key] = (path, content_type)

    def get(self, key):
        """(path, Content-Type) of the object stored under `key`, or None."""
        with self.lock:
            return self.objects.get(key)

    def listing(self):
        """Every stored key with its size, sorted by key."""
        with self.lock:
            return sorted((key, os.path.getsize(path)) for key, (path, _) in self.objects.items())

    def record(self, entry):
        with self.lock:
            self.posts.append(entry)

    def remove(self):
        shutil.rmtree(self.directory, ignore_errors=True)


# --- the HTTP side ---------------------------------------------------------------------------

def element(tag, text):
    """`<tag>text</tag>` with the text escaped."""
    return f"<{tag}>{escape(str(text))}</{tag}>"


def xml_document(root, children, one_line=False):
    """An XML declaration and `<root>` holding `children` (rendered elements): one a line,
    indented by two spaces (OSS, COS), or all on the root's line (S3)."""
    if one_line:
        return f'<?xml version="1.0" encoding="UTF-8"?>\n<{root}>{"".join(children)}</{root}>'
    inner = "".join(f"  {child}\n" for child in children)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<{root}>\n{inner}</{root}>\n'


class PostObjectHandler(http.server.BaseHTTPRequestHandler):
    """The HTTP/1.1 side of a mock: `serve` sets `options` (the command line) and `store` (an
    `ObjectStore`); a mock's subclass writes `error_document` and its do_POST and do_GET."""

    protocol_version = "HTTP/1.1"
    options = None
    store = None
    # S3's answers carry Content-Length even on a 204; OSS and COS send neither it nor a type.
    length_on_204 = False

    def store_headers(self):
        """Headers every answer of this store carries (a request id)."""
        return []

    def error_document(self, refusal):
        raise NotImplementedError

    def send_answer_head(self, status, content_type, length, headers=()):
        self.send_response(status)
        for name, value in [*self.store_headers(), *headers]:
            self.send_header(name, value)
        if status != 204:
            self.send_header("Content-Type", content_type)
        if status != 204 or self.length_on_204:
            self.send_header("Content-Length", str(length))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()

    def answer(self, status, body=b"", content_type="application/xml", headers=()):
        self.send_answer_head(status, content_type, len(body), headers)
        if status != 204:
            self.wfile.write(body)

    def refuse(self, refusal):
        self.answer(refusal.status, self.error_document(refusal).encode())

    def body_reader(self, discard_chunked):
        """The request body's reader. A body without a Content-Length is 411 MissingContentLength
        (a chunked one read to its end first when `discard_chunked`, so the answer reaches a
        client still sending), a length that is not a number 400; both close the connection."""
        chunked = "Transfer-Encoding" in self.headers
        if chunked or self.headers.get("Content-Length") is None:
            if chunked and discard_chunked:
                self.discard_chunked_body()
            self.close_connection = True
            raise Refusal(411, "MissingContentLength", "You must provide the Content-Length HTTP header.")
        try:
            length = int(self.headers["Content-Length"])
        except ValueError:
            self.close_connection = True
            raise Refusal(400, "InvalidArgument", "Content-Length is not a number.") from None
        return BodyReader(self.rfile, length)

    def discard_chunked_body(self):
        """Reads a chunked body to its end."""
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                break
            self.rfile.read(size + 2)
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass

    def receive_form(self, reader, boundary, is_file, pre_data_limit=None):
        """`read_form` of the body into the store's directory; a refusal while reading closes
        the connection (the rest of the body was not read)."""
        try:
            return read_form(reader, boundary, self.store.directory, is_file, pre_data_limit)
        except Refusal:
            self.close_connection = True
            raise

    def answer_object(self, key):
        """200 with the bytes and Content-Type stored under `key`, else 404 NoSuchKey."""
        found = self.store.get(key) if key else None
        if found is None:
            return self.refuse(Refusal(404, "NoSuchKey", "The specified key does not exist."))
        path, content_type = found
        self.send_answer_head(200, content_type, os.path.getsize(path))
        with open(path, "rb") as stored:
            shutil.copyfileobj(stored, self.wfile, CHUNK)

    def answer_listing(self):
        """200 with a ListBucketResult naming every stored key and its size."""
        children = [element("Name", self.options.bucket)] + [
            f"<Contents>{element('Key', key)}{element('Size', size)}</Contents>"
            for key, size in self.store.listing()]
        self.answer(200, xml_document("ListBucketResult", children).encode())

    def log_message(self, *args):
        pass


# --- OSS and COS -----------------------------------------------------------------------------

def single_file_fields(form):
    """OSS and COS: the form's fields by lower-case name, once the file (a part with a filename)
    is the last part, named `file`, and the only part with a filename, and no field name is
    sent twice (400 InvalidArgument)."""
    parts = [(name, None) for name, _ in form.fields]
    if form.file is not None:
        parts += [(form.file.name, form.file.filename), *form.after_file]
    if not parts or parts[-1][0].lower() != "file" or parts[-1][1] is None:
        order = [name for name, _ in parts]
        raise Refusal(400, "InvalidArgument", f"the file must be the last form field, got {order}")
    fields = {}
    for name, value in form.fields:
        if name.lower() in fields:
            raise Refusal(400, "InvalidArgument", f"the form field {name} is sent twice")
        fields[name.lower()] = value
    if form.after_file:
        raise Refusal(400, "InvalidArgument", f"only one file part may be sent, {form.file.name} is another")
    return fields


def policy_document(fields, without_conditions):
    """OSS and COS: the `policy` field's JSON text and document (403 AccessDenied without one,
    400 InvalidPolicyDocument when it is not base64 of a JSON object, `without_conditions`
    the message when the object has no list of conditions)."""
    encoded = fields.get("policy")
    if not encoded:
        raise Refusal(403, "AccessDenied", "the policy form field is required")
    try:
        text = base64.b64decode(encoded, validate=True).decode("utf-8")
        policy = json.loads(text)
    except (binascii.Error, ValueError):
        raise Refusal(400, "InvalidPolicyDocument", "the policy is not base64 of a JSON object") from None
    if not isinstance(policy, dict) or not isinstance(policy.get("conditions"), list):
        raise Refusal(400, "InvalidPolicyDocument", without_conditions)
    return text, policy


def policy_time(text):
    """Unix seconds of an ISO 8601 UTC time (`2026-12-01T12:00:00.000Z`, fraction optional)."""
    match = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?Z", text or "")
    if not match:
        raise Refusal(400, "InvalidPolicyDocument", f"expiration {text!r} is not an ISO 8601 UTC time")
    return calendar.timegm(tuple(int(group) for group in match.groups()[:6]))


def check_condition(condition, value_of, size, failed, lists=False):
    """OSS and COS: one policy condition. {"field": value} and ["eq", "$field", value] exactly,
    ["starts-with", "$field", prefix], with `lists` ["in"/"not-in", "$field", [..]], against
    `value_of(name)`; `failed(name)` is the refusal when one does not hold.
    ["content-length-range", min, max] against the file's `size` (400 EntityTooLarge/Small)."""
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
    actual, expected = value_of(name), condition[2]
    if operator == "eq":
        passed = actual == expected
    elif operator == "starts-with":
        passed = (actual if actual is not None else "").startswith(expected)
    elif lists and operator in ("in", "not-in") and isinstance(expected, list):
        passed = (actual in expected) == (operator == "in")
    else:
        raise Refusal(400, "InvalidPolicyDocument", f"unknown condition {condition}")
    if not passed:
        raise failed(name)


def check_security_token(sent, expected, permanent_key):
    """OSS and COS: with --security-token the form's token must be it (403 InvalidSecurityToken);
    without, a token is refused: the mock's `permanent_key` is not a temporary one."""
    if expected is None and sent is not None:
        raise Refusal(403, "InvalidAccessKeyId", f"a security token was sent with a permanent {permanent_key}")
    if expected is not None and sent != expected:
        raise Refusal(403, "InvalidSecurityToken", "The security token you provided is invalid.")


class SingleFilePostHandler(PostObjectHandler):
    """OSS and COS: POST (any path) takes a form whose file is the part with a filename; a body
    without a Content-Length is 411 (a chunked one read to its end first, so the answer reaches
    a client still sending), another type than multipart/form-data 400 InvalidArgument. GET /
    lists the stored keys and sizes (a ListBucketResult, so a test can see that nothing was
    stored), GET /KEY (URL-encoded) returns an object. A subclass sets `checks` (a class whose
    `checks(options).verify(form)` gives the fields by lower-case name or raises a `Refusal`)
    and writes `stored_type` and `answer_stored`."""

    checks = None

    def stored_type(self, fields, file):
        """The Content-Type the object is stored with."""
        raise NotImplementedError

    def answer_stored(self, key, fields, md5):
        """The answer once the object is stored under `key` (`md5` its hex MD5)."""
        raise NotImplementedError

    def do_POST(self):
        try:
            reader = self.body_reader(discard_chunked=True)
            boundary = multipart_boundary(self.headers.get("Content-Type"))
            if boundary is None:
                reader.drain()
                raise Refusal(400, "InvalidArgument", "the body must be multipart/form-data with a boundary")
            form = self.receive_form(reader, boundary, lambda _, filename: filename is not None)
            try:
                fields = self.checks(self.options).verify(form)
                key = fields["key"].replace("${filename}", form.file.filename)
                self.store.put(key, form.file.path, self.stored_type(fields, form.file))
            finally:
                form.discard()
        except Refusal as refusal:
            return self.refuse(refusal)
        self.answer_stored(key, fields, form.file.md5)

    def answer_success(self, key, fields, etag, query_etag, headers, post_response):
        """303 to `success_action_redirect` (the bucket, the key and `query_etag` in its query),
        or `success_action_status` 200 (empty) or 201 (a PostResponse of the `post_response`
        elements), else 204; each with the ETag `etag`, all but the 303 with `headers` too."""
        redirect = fields.get("success_action_redirect")
        if redirect:
            query = urllib.parse.urlencode({"bucket": self.options.bucket, "key": key, "etag": query_etag})
            return self.answer(303, headers=[("ETag", etag), ("Location", f"{redirect}?{query}")])
        headers = [("ETag", etag), *headers]
        status = fields.get("success_action_status")
        if status == "200":
            return self.answer(200, headers=headers)
        if status == "201":
            return self.answer(201, xml_document("PostResponse", post_response).encode(), headers=headers)
        self.answer(204, headers=headers)

    def do_GET(self):
        key = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path[1:])
        if not key:
            return self.answer_listing()
        self.answer_object(key)


# --- running ---------------------------------------------------------------------------------

def command_line(description, region_help, token, access_key_help=None, bucket_help=None):
    """The parsed command line every mock takes: --access-key, --secret-key and --bucket
    (required), --region (`region_help`, or required when None), --clock-offset SECONDS and
    the token flag of temporary credentials, `token` = (flag, help)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--access-key", required=True, help=access_key_help)
    parser.add_argument("--secret-key", required=True)
    parser.add_argument("--bucket", required=True, help=bucket_help)
    parser.add_argument("--region", required=region_help is None, help=region_help)
    parser.add_argument("--clock-offset", type=float, default=0.0, help="seconds added to the mock's clock")
    parser.add_argument(token[0], help=token[1])
    return parser.parse_args()


def serve(handler, options, store_prefix):
    """Serves `handler` with `options` and a new `ObjectStore` (its directory named after
    `store_prefix`) on 127.0.0.1 on a free port, concurrently, until SIGTERM, and prints
    `listening on 127.0.0.1:PORT` on stderr. SIGTERM ends the server with the store's directory
    removed; a test runner's child may inherit SIGTERM blocked, which would leave only SIGKILL
    (and the directory behind), so it is unblocked."""
    handler.options, handler.store = options, ObjectStore(store_prefix)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    print(f"listening on 127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    finally:
        handler.store.remove()
