"""boto3 against an S3 endpoint, for FormGate's S3 POST round trips (run by the SDK venv's Python).

s3_client.py ENDPOINT create-bucket BUCKET
    creates the bucket (moto starts empty).
s3_client.py ENDPOINT get BUCKET KEY
    reads the object with get_object and prints {"size", "sha256", "content_type"} as JSON,
    hashing the body as it streams; {"error": CODE} and exit status 3 when S3 refuses.
s3_client.py ENDPOINT presign BUCKET KEY ACCESS_KEY SECRET_KEY REGION
    prints botocore's generate_presigned_post fields (SigV4) as JSON, for a policy with the
    fields `acl` (["eq", "$acl", "private"]) and `x-amz-meta-tag` (starts-with "trip-") and a
    content-length-range of 1 to 1 MiB.
s3_client.py ENDPOINT list BUCKET
    prints {"objects": [keys], "uploads": [keys of multipart uploads in progress]} (every page).
Credentials default to moto's (any key works there)."""
import hashlib
import json
import sys

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

endpoint, command, *rest = sys.argv[1:]


def client(access_key="testing", secret_key="testing", region="us-east-1"):
    return boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=access_key,
                        aws_secret_access_key=secret_key, region_name=region,
                        config=Config(signature_version="s3v4", s3={"addressing_style": "path"}))


if command == "create-bucket":
    client().create_bucket(Bucket=rest[0])
    print(json.dumps({"created": rest[0]}))
elif command == "get":
    try:
        answer = client().get_object(Bucket=rest[0], Key=rest[1])
    except ClientError as error:
        print(json.dumps({"error": error.response["Error"]["Code"]}))
        sys.exit(3)
    digest, size = hashlib.sha256(), 0
    for chunk in answer["Body"].iter_chunks(1 << 20):
        digest.update(chunk)
        size += len(chunk)
    print(json.dumps({"size": size, "sha256": digest.hexdigest(), "content_type": answer["ContentType"]}))
elif command == "presign":
    bucket, key, access_key, secret_key, region = rest
    post = client(access_key, secret_key, region).generate_presigned_post(
        bucket, key, Fields={"acl": "private"},
        Conditions=[["eq", "$acl", "private"], ["starts-with", "$x-amz-meta-tag", "trip-"],
                    ["content-length-range", 1, 1 << 20]],
        ExpiresIn=600)
    print(json.dumps(post["fields"]))
elif command == "list":
    s3, objects, uploads = client(), [], []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=rest[0]):
        objects += [entry["Key"] for entry in page.get("Contents", [])]
    for page in s3.get_paginator("list_multipart_uploads").paginate(Bucket=rest[0]):
        uploads += [entry["Key"] for entry in page.get("Uploads", [])]
    print(json.dumps({"objects": objects, "uploads": uploads}))
else:
    sys.exit(f"unknown command {command}")
