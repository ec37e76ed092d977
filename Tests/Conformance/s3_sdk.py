"""boto3 against the moto server, for the object-store table of the conformance matrix.

Runs under the SDK venv's python ($FORMGATE_SDK_PYTHON: the matrix itself runs under Debian's,
which has no boto3), with moto's default test credentials; prints one JSON object.

    s3_sdk.py ENDPOINT create-bucket BUCKET      -> {"created": BUCKET}
    s3_sdk.py ENDPOINT get BUCKET KEY            -> {"size", "sha256", "content_type", "metadata"}
"""
import hashlib
import json
import sys

import boto3
from botocore.config import Config

endpoint, command, bucket = sys.argv[1:4]
s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="testing",
                  aws_secret_access_key="testing", config=Config(s3={"addressing_style": "path"}))
if command == "create-bucket":
    s3.create_bucket(Bucket=bucket)
    print(json.dumps({"created": bucket}))
elif command == "get":
    found = s3.get_object(Bucket=bucket, Key=sys.argv[4])
    data = found["Body"].read()
    print(json.dumps({"size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                      "content_type": found["ContentType"], "metadata": found["Metadata"]}))
else:
    sys.exit(f"s3_sdk.py: unknown command {command}")
