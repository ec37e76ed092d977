"""A verifying Aliyun OSS PostObject endpoint for FormGate's tests, written from Aliyun's
PostObject documentation (form elements, "POST V1 signature", "POST V4 signature", the policy
appendix and the PostObject error pages); no SDK code.

Usage: oss_post_mock.py --access-key AK --secret-key SK --bucket B [--region R]
                        [--clock-offset SECONDS] [--security-token TOKEN]

The HTTP side (a free loopback port, 411 for a body without a length, GET / and GET /KEY) is
post_object_mock.py's `SingleFilePostHandler`, shared with cos_post_mock.py.

POST (any path) checks, as OSS does, and stores the object:
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
<Error><Code>..</Code><Message>..</Message>...</Error> with its codes."""
import base64
import calendar
import hashlib
import hmac
import json
import time
import urllib.parse
import uuid

from post_object_mock import (Refusal, SingleFilePostHandler, check_condition, check_security_token,
                              command_line, element, now, policy_document, policy_time, serve,
                              single_file_fields, xml_document)

V4_ALGORITHM = "OSS4-HMAC-SHA256"
DATE_SKEW_SECONDS = 15 * 60
V4_MAX_AGE_SECONDS = 7 * 24 * 3600


def hmac_sha256(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


class OSSPostObject:
    """The checks OSS makes on a PostObject form, with what the mock knows: its one key pair,
    bucket, region and clock."""

    def __init__(self, options):
        self.options = options

    def verify(self, form):
        """The form's fields by lower-case name, once every check passed."""
        fields = single_file_fields(form)
        encoded = fields.get("policy")
        _, policy = policy_document(fields, "the policy needs expiration and conditions")
        if "x-oss-signature-version" in fields:
            self.verify_v4(fields, encoded, policy)
        else:
            self.verify_v1(fields, encoded)
        check_security_token(fields.get("x-oss-security-token"), self.options.security_token, "AccessKey")
        if policy_time(policy.get("expiration")) < now(self.options):
            raise Refusal(403, "AccessDenied", "Invalid according to Policy: Policy expired.")
        for condition in policy["conditions"]:
            self.check(condition, fields, form.file.size)
        if not fields.get("key"):
            raise Refusal(400, "InvalidArgument", "the key form field is required")
        return fields

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
        if signed_at > now(self.options) + DATE_SKEW_SECONDS or now(self.options) - signed_at > V4_MAX_AGE_SECONDS:
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

    def check(self, condition, fields, size):
        """One policy condition against the form (OSS: 403 AccessDenied naming it)."""
        def value_of(name):
            name = name.lower()
            return self.options.bucket if name == "bucket" else fields.get(name)

        failed = Refusal(403, "AccessDenied", f"Invalid according to Policy: Policy Condition failed: {json.dumps(condition)}")
        check_condition(condition, value_of, size, lambda _: failed, lists=True)


class Handler(SingleFilePostHandler):
    checks = OSSPostObject

    def store_headers(self):
        return [("x-oss-request-id", uuid.uuid4().hex.upper()[:24])]

    def error_document(self, refusal):
        return xml_document("Error", [
            element("Code", refusal.code), element("Message", refusal.message),
            element("RequestId", uuid.uuid4().hex.upper()[:24]),
            element("HostId", f"{self.options.bucket}.oss-mock.local")])

    def stored_type(self, fields, file):
        # x-oss-content-type first (Aliyun: it takes precedence over the part's type), then a
        # Content-Type field (the reading a proxy must defend against), then the part's.
        return (fields.get("x-oss-content-type") or fields.get("content-type") or file.content_type
                or "application/octet-stream")

    def answer_stored(self, key, fields, md5):
        md5 = md5.upper()
        location = f"http://{self.options.bucket}.oss-mock.local/{urllib.parse.quote(key)}"
        self.answer_success(key, fields, f'"{md5}"', md5, [], [
            element("Bucket", self.options.bucket), element("Location", location), element("Key", key),
            element("ETag", f'"{md5}"')])


def main():
    serve(Handler, command_line("A verifying Aliyun OSS PostObject mock.", "the V4 credential's region (any when absent)",
                                ("--security-token", "the STS token x-oss-security-token must carry")),
          "oss-post-mock-")


if __name__ == "__main__":
    main()
