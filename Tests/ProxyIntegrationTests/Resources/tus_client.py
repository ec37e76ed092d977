"""The official tus Python client (tuspy) uploading one file, for FormGate's tus tests (run by
the SDK venv's Python).

tus_client.py CREATION_URL FILE CHUNK_SIZE METADATA_JSON [checksum]
    uploads FILE with tusclient's Uploader (chunk_size CHUNK_SIZE, Upload-Metadata from the
    JSON object; with `checksum`, upload_checksum=True: an Upload-Checksum (sha1) on every
    PATCH) and prints, as JSON: "exchanges" (method, status, Upload-Offset of every
    request tuspy sent, in order), "location" (the upload URL), and the answer to the request
    that completed the upload ("status", "body": the upstream's answer FormGate relays). tuspy
    keeps only the last PATCH's answer, and none for the creation of a 0-byte upload: the
    requests functions it calls are wrapped to record every answer, nothing else changes.
    Exit status 3 when tuspy raised (the error is printed as "error")."""
import json
import sys

import requests
from tusclient import client

url, path, chunk_size, metadata = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
checksum = sys.argv[5:] == ["checksum"]
exchanges = []
answers = []


def recorded(method, call):
    def wrapper(*args, **kwargs):
        response = call(*args, **kwargs)
        body = response.content
        exchanges.append({"method": method, "status": response.status_code,
                          "offset": response.headers.get("Upload-Offset")})
        answers.append((response.status_code, body))
        return response
    return wrapper


requests.post = recorded("POST", requests.post)
requests.patch = recorded("PATCH", requests.patch)
requests.head = recorded("HEAD", requests.head)

result = {}
try:
    uploader = client.TusClient(url).uploader(
        path, chunk_size=chunk_size, metadata=metadata, upload_checksum=checksum)
    uploader.upload()
    result["location"] = uploader.url
except Exception as error:  # tuspy's TusCommunicationError, TusUploadFailed
    result["error"] = f"{type(error).__name__}: {error}"
result["exchanges"] = exchanges
if answers:
    result["status"] = answers[-1][0]
    result["body"] = answers[-1][1].decode("utf-8", "replace")
print(json.dumps(result))
sys.exit(3 if "error" in result else 0)
