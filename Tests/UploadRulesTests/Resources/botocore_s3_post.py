"""The S3 POST oracle: botocore's own generate_presigned_post with a frozen clock.

Usage: botocore_s3_post.py REQUEST_JSON. The request names the credentials, region, bucket,
key, Content-Type, extra conditions, expiry, the Unix time to freeze the clock at, and the
base64 policy FormGate wrote for the same upload. Prints one JSON object:

  fields     botocore's form fields as [name, value] pairs, in the order it returns them
  botocore   its policy decoded: expiration as Unix seconds, conditions canonicalised
  formgate   FormGate's policy decoded the same way (json.loads must accept it)

A condition is canonicalised as compact JSON with sorted keys; the lists are sorted, since S3
does not care in which order conditions are written.
"""

import base64
import calendar
import datetime
import json
import sys
from unittest import mock

import botocore
import botocore.auth
import botocore.config
import botocore.session
import botocore.signers


def decoded(policy_b64):
    policy = json.loads(base64.b64decode(policy_b64, validate=True).decode("utf-8"))
    expiration = policy["expiration"]
    for layout in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            moment = datetime.datetime.strptime(expiration, layout)
            break
        except ValueError:
            continue
    else:
        raise SystemExit(f"unreadable expiration {expiration!r}")
    return {
        "expiration": calendar.timegm(moment.utctimetuple()),
        "expiration_text": expiration,
        "conditions": sorted(
            json.dumps(c, separators=(",", ":"), sort_keys=True) for c in policy["conditions"]
        ),
    }


def main():
    request = json.loads(sys.argv[1])
    frozen = datetime.datetime.fromtimestamp(request["now"], datetime.timezone.utc).replace(tzinfo=None)
    session = botocore.session.get_session()
    client = session.create_client(
        "s3",
        region_name=request["region"],
        aws_access_key_id=request["access_key"],
        aws_secret_access_key=request["secret_key"],
        aws_session_token=request.get("session_token"),
        # us-east-1 still defaults to SigV2 (AWSAccessKeyId/signature) for presigned posts.
        config=botocore.config.Config(signature_version="s3v4"),
    )
    fields = {}
    conditions = list(request["conditions"])
    if request.get("content_type"):
        fields["Content-Type"] = request["content_type"]
        conditions.append({"Content-Type": request["content_type"]})
    # An exact condition is met by sending its field: botocore's users pass both.
    for condition in request["conditions"]:
        if isinstance(condition, dict):
            fields.update(condition)
    # botocore reads the clock through get_current_datetime, imported by name into both the
    # signer (the policy's expiration) and the SigV4 POST auth (x-amz-date, the scope's date).
    with mock.patch.object(botocore.signers, "get_current_datetime", return_value=frozen), mock.patch.object(
        botocore.auth, "get_current_datetime", return_value=frozen
    ):
        post = client.generate_presigned_post(
            Bucket=request["bucket"],
            Key=request["key"],
            Fields=fields,
            Conditions=conditions,
            ExpiresIn=request["expires_in"],
        )
    out = post["fields"]
    print(
        json.dumps(
            {
                "botocore_version": botocore.__version__,
                "fields": [[name, value] for name, value in out.items()],
                "botocore": decoded(out["policy"]),
                "formgate": decoded(request["formgate_policy"]),
            }
        )
    )


if __name__ == "__main__":
    main()
