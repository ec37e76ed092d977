"""A verifying Tencent COS POST Object endpoint for FormGate's tests, written from Tencent's
POST Object document (request form, "signature protection", its worked example) and its
"POST Object common exceptions" page; no SDK code.

Usage: cos_post_mock.py --access-key SECRET_ID --secret-key SECRET_KEY --bucket B [--region R]
                        [--clock-offset SECONDS] [--security-token TOKEN]

The HTTP side (a free loopback port, 411 for a body without a length, GET / and GET /KEY) is
post_object_mock.py's `SingleFilePostHandler`, shared with oss_post_mock.py.

POST (any path) checks, as COS does, and stores the object:
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
</Error> with its codes."""
import hashlib
import hmac
import re
import urllib.parse
import uuid

from post_object_mock import (Refusal, SingleFilePostHandler, check_condition, check_security_token,
                              command_line, element, now, policy_document, policy_time, serve,
                              single_file_fields, xml_document)


def hmac_sha1_hex(key, text):
    return hmac.new(key.encode(), text.encode(), hashlib.sha1).hexdigest()


class COSPostObject:
    """The checks COS makes on a POST Object form, with what the mock knows: its one key pair,
    bucket and clock."""

    def __init__(self, options):
        self.options = options

    def verify(self, form):
        """The form's fields by lower-case name, once every check passed."""
        fields = single_file_fields(form)
        text, policy = policy_document(
            fields, "You must provide condition if you specify a policy in post object request.")
        self.verify_signature(fields, text)
        check_security_token(fields.get("x-cos-security-token"), self.options.security_token, "SecretId")
        expiration = policy_time(policy.get("expiration"))
        if expiration < now(self.options):
            raise Refusal(403, "AccessDenied", f"You post object request has been expired, expiration time: {expiration} but the time now : {int(now(self.options))}")
        for condition in policy["conditions"]:
            self.check(condition, fields, form.file.size)
        if not fields.get("key"):
            raise Refusal(400, "InvalidArgument", "the key form field is required")
        return fields

    def verify_signature(self, fields, policy_text):
        if fields.get("q-sign-algorithm") != "sha1":
            raise Refusal(400, "InvalidArgument", "q-sign-algorithm must be sha1")
        if fields.get("q-ak") != self.options.access_key:
            raise Refusal(403, "InvalidAccessKeyId", "The access key Id format you provided is invalid.")
        key_time = fields.get("q-key-time", "")
        match = re.fullmatch(r"(\d+);(\d+)", key_time)
        if not match:
            raise Refusal(400, "InvalidArgument", f"q-key-time {key_time!r} is not start;end")
        if not int(match.group(1)) <= now(self.options) <= int(match.group(2)):
            raise Refusal(403, "AccessDenied", "Request has expired")
        sign_key = hmac_sha1_hex(self.options.secret_key, key_time)
        string_to_sign = hashlib.sha1(policy_text.encode()).hexdigest()
        expected = hmac_sha1_hex(sign_key, string_to_sign)
        if not hmac.compare_digest(fields.get("q-signature", ""), expected):
            raise Refusal(403, "SignatureDoesNotMatch", "The Signature you specified is invalid.")

    def check(self, condition, fields, size):
        """One policy condition against the form (COS: 403 AccessDenied naming the key)."""
        def value_of(name):
            name = name.lower()
            if name == "bucket":
                return self.options.bucket
            return fields.get("q-key-time" if name == "q-sign-time" else name)

        def failed(name):
            return Refusal(403, "AccessDenied", f"Condition key {name} doesn't match the value {value_of(name)}")

        check_condition(condition, value_of, size, failed)


class Handler(SingleFilePostHandler):
    checks = COSPostObject

    def store_headers(self):
        return [("x-cos-request-id", uuid.uuid4().hex)]

    def error_document(self, refusal):
        return xml_document("Error", [
            element("Code", refusal.code), element("Message", refusal.message),
            element("Resource", f"{self.options.bucket}.cos.mock/"), element("RequestId", uuid.uuid4().hex),
            element("TraceId", uuid.uuid4().hex)])

    def stored_type(self, fields, file):
        return fields.get("content-type") or "application/octet-stream"  # COS ignores the part's own

    def answer_stored(self, key, fields, md5):
        location = f"http://{self.options.bucket}.cos.mock/{urllib.parse.quote(key)}"
        self.answer_success(key, fields, f'"{md5}"', f'"{md5}"', [("Location", location)], [
            element("Location", location), element("Bucket", self.options.bucket), element("Key", key),
            element("ETag", f'"{md5}"')])


def main():
    serve(Handler, command_line("A verifying Tencent COS POST Object mock.",
                                "accepted for the common mock command line; unused",
                                ("--security-token", "the temporary key's token x-cos-security-token must carry"),
                                access_key_help="the SecretId (q-ak)", bucket_help="BucketName-APPID"),
          "cos-post-mock-")


if __name__ == "__main__":
    main()
