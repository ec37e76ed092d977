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
(path style) and POST / (the bucket is the only bucket) upload. The HTTP side, the form reader
and the object store are post_object_mock.py's, shared with the OSS and COS mocks."""
import base64
import binascii
import datetime
import hashlib
import hmac
import json
import urllib.parse

from post_object_mock import (PostObjectHandler, Refusal, command_line, element, multipart_boundary,
                              now, serve, xml_document)

# S3 refuses a form whose fields before the file exceed 20 KB (MaxPostPreDataLengthExceeded).
MAX_PRE_DATA = 20 * 1024


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
                          f"Field {upload.after_file[0][0]} follows the file (S3 ignores fields after the file).")
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
        if parse_expiration(policy.get("expiration")) <= now(self.options):
            raise Refusal(403, "AccessDenied", "Invalid according to Policy: Policy expired.")
        covered = {"file", "policy", "x-amz-signature"}
        for condition in policy["conditions"]:
            covered.add(self.check_condition(condition, fields, upload.file.size))
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


class Handler(PostObjectHandler):
    length_on_204 = True

    def error_document(self, refusal):
        return xml_document("Error", [element("Code", refusal.code), element("Message", refusal.message),
                                      element("RequestId", "mock")], one_line=True)

    def bucket_path(self):
        """The object key part of a path-style URL, or None when it names another bucket."""
        path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        if path == "/":
            return ""
        bucket, _, key = path[1:].partition("/")
        return key if bucket == self.options.bucket else None

    def do_POST(self):
        record = {"path": self.path, "fields": [], "file": None, "after_file": [], "key": None,
                  "chunked": "Transfer-Encoding" in self.headers}
        try:
            self.post(record)
        except Refusal as refusal:
            record["status"], record["code"] = refusal.status, refusal.code
            self.refuse(refusal)
        self.store.record(record)

    def post(self, record):
        reader = self.body_reader(discard_chunked=False)
        if self.bucket_path() != "":
            reader.drain()
            raise Refusal(404, "NoSuchBucket", "The specified bucket does not exist")
        boundary = multipart_boundary(self.headers.get("Content-Type"))
        if boundary is None:
            reader.drain()
            raise Refusal(412, "PreconditionFailed",
                          "Bucket POST must be of the enclosure-type multipart/form-data")
        upload = None
        try:
            upload = self.receive_form(reader, boundary, lambda name, _: name.lower() == "file", MAX_PRE_DATA)
            record["fields"] = [[name, value] for name, value in upload.fields]
            record["after_file"] = [name for name, _ in upload.after_file]
            if upload.file:
                record["file"] = {name: getattr(upload.file, name)
                                  for name in ("filename", "content_type", "size", "sha256")}
            fields = Verifier(self.options).verify(upload)
            key = fields["key"].replace("${filename}", upload.file.filename or "")
            content_type = fields.get("content-type") or upload.file.content_type or "binary/octet-stream"
            self.store.put(key, upload.file.path, content_type)
        finally:
            if upload:
                upload.discard()
        record["key"] = key
        status = fields.get("success_action_status")
        status = int(status) if status in ("200", "201") else 204
        record["status"], record["code"] = status, None
        location = f"http://{self.headers.get('Host', '')}/{self.options.bucket}/{urllib.parse.quote(key)}"
        etag = '"' + upload.file.md5 + '"'
        body = b""
        if status == 201:
            body = xml_document("PostResponse", [element("Location", location), element("Bucket", self.options.bucket),
                                                 element("Key", key), element("ETag", etag)], one_line=True).encode()
        self.answer(status, body, headers=[("ETag", etag), ("Location", location)])

    def do_GET(self):
        if urllib.parse.urlsplit(self.path).path == "/_mock/posts":
            with self.store.lock:
                data = json.dumps(self.store.posts).encode()
            return self.answer(200, data, "application/json")
        self.answer_object(self.bucket_path())


def main():
    serve(Handler, command_line("A verifying S3 POST-object endpoint.", None,
                                ("--session-token", "temporary credentials: the x-amz-security-token required")),
          "s3-post-mock-")


if __name__ == "__main__":
    main()
