#!/usr/bin/env python3
"""The official Qiniu SDK (PyPI `qiniu`, in the Makefile's SDK venv) as the oracle of a token
FormGate minted: reads ACCESS_KEY SECRET_KEY TOKEN, re-signs the token's own policy with
`qiniu.Auth.token_with_data` and prints {"sdk_token", "policy"} as JSON. Exits 2 when the SDK
is missing, so the Swift test fails rather than skips."""
import base64, json, sys

try:
    import qiniu
except ImportError as error:
    print(f"qiniu_oracle: {error} (make sdk-venv installs the SDK)", file=sys.stderr)
    sys.exit(2)

access_key, secret_key, token = sys.argv[1:4]
encoded = token.rsplit(":", 1)[1]
policy = base64.urlsafe_b64decode(encoded).decode()
print(json.dumps({"sdk_token": qiniu.Auth(access_key, secret_key).token_with_data(policy), "policy": policy}))
