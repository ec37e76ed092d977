"""The vendors' SDKs as oracles for FormGate's OSS and COS POST signatures.

Run by OSSCOSOracleTests with the Python of FORMGATE_SDK_PYTHON (the Makefile's
.build/sdk-venv: oss2 2.19.1, cos-python-sdk-v5 1.9.44). Reads one JSON request on stdin,
writes one JSON answer on stdout:

  {"oss_v1": [{"secret", "policy"}],
   "oss_v4": [{"access_key", "secret", "region", "date_time", "policy"}],
   "cos":    [{"secret_id", "secret_key", "now", "expire"}]}

Neither SDK has a POST-policy signer (oss2 2.19.1 signs headers and URLs only; cos-python-sdk-v5
1.9.44 signs requests, get_auth, and RTMP URLs only), so each answer comes from the SDK's own
signing internals fed the string FormGate signs:

- oss_v1: oss2.ProviderAuth's private make-signature (HMAC-SHA1, base64) with its
  string-to-sign replaced by the base64 policy, which is exactly the PostObject V1 rule.
- oss_v4: oss2.ProviderAuthV4's private make-signature (the "aliyun_v4" + secret key chain
  over date, region, "oss", "aliyun_v4_request", then hex HMAC-SHA256) with its string-to-sign
  replaced by the base64 policy, the PostObject V4 rule; and the SDK's credential scope.
- cos: no hook lets the SDK sign a POST policy (its string-to-sign is always
  "sha1\\n<time>\\n<sha1 of the HTTP string>\\n"). The answer is the SDK's get_auth at a
  frozen clock: its q-key-time, the str_to_sign it logged, and its q-signature. The Swift test
  signs that same string with FormGate's COS chain (SignKey = hex HMAC-SHA1(SecretKey,
  KeyTime), Signature = hex HMAC-SHA1(SignKey, StringToSign)), the part POST shares; the POST
  step (StringToSign = SHA1 hex of the policy) is pinned by Tencent's published vector.
"""

import json
import logging
import sys
import time

import oss2
from oss2.credentials import Credentials
from oss2.http import Request
from qcloud_cos import CosConfig, CosS3Client


def oss_v1(case):
    auth = oss2.Auth("unused-access-key", case["secret"])
    auth._ProviderAuth__get_bytes_to_sign = lambda req, bucket, key: case["policy"].encode()
    credentials = Credentials("unused-access-key", case["secret"])
    request = Request("POST", "http://oracle.invalid/")
    return {"signature": auth._ProviderAuth__make_signature(request, None, None, credentials)}


def oss_v4(case):
    auth = oss2.AuthV4(case["access_key"], case["secret"])
    auth._ProviderAuthV4__get_canonical_request_bytes = lambda req, bucket, key, headers: b""
    auth._ProviderAuthV4__get_string_to_sign_bytes = lambda req, canonical, date_time: case[
        "policy"
    ].encode()
    credentials = Credentials(case["access_key"], case["secret"])
    request = Request("POST", "http://oracle.invalid/", region=case["region"], product="oss")
    date_time = case["date_time"]
    signature = auth._ProviderAuthV4__make_signature(request, None, None, [], credentials, date_time)
    scope = auth._ProviderAuthV4__get_scope(date_time[:8], request)
    return {"signature": signature, "credential": case["access_key"] + "/" + scope}


class Captured(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.string_to_sign = None

    def emit(self, record):
        message = record.getMessage()
        if message.startswith("str_to_sign: "):
            self.string_to_sign = message[len("str_to_sign: "):]


def cos(case):
    captured = Captured()
    logger = logging.getLogger("qcloud_cos.cos_auth")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(captured)
    frozen = time.time
    time.time = lambda: float(case["now"])
    try:
        config = CosConfig(
            Region="ap-beijing", SecretId=case["secret_id"], SecretKey=case["secret_key"])
        authorization = CosS3Client(config).get_auth(
            Method="POST", Bucket="examplebucket-1250000000", Key="/", Expired=case["expire"])
    finally:
        time.time = frozen
        logger.removeHandler(captured)
    fields = dict(item.split("=", 1) for item in authorization.split("&"))
    if captured.string_to_sign is None:
        raise SystemExit("cos-python-sdk-v5 logged no str_to_sign")
    return {
        "q-ak": fields["q-ak"],
        "q-key-time": fields["q-key-time"],
        "string_to_sign": captured.string_to_sign,
        "q-signature": fields["q-signature"],
    }


def main():
    request = json.load(sys.stdin)
    answer = {
        "oss_v1": [oss_v1(case) for case in request.get("oss_v1", [])],
        "oss_v4": [oss_v4(case) for case in request.get("oss_v4", [])],
        "cos": [cos(case) for case in request.get("cos", [])],
        "versions": {
            "oss2": oss2.__version__,
            "cos-python-sdk-v5": __import__("qcloud_cos.version").version.__version__,
        },
    }
    json.dump(answer, sys.stdout)


if __name__ == "__main__":
    main()
