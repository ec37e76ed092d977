#!/usr/bin/env python3
"""Writes Fuzz/Seeds/<target>/ from the test fixtures (commit the result):

- FuzzMultipart: every body of Tests/Fixtures/corpus (browser captures and other parsers' test
  suites) with its boundary replaced by the harness's `b0undary`, and the hostile corpus's
  multipart bodies likewise; each prefixed with 4 bytes of split points.
- FuzzHeaderValues: every Content-Type and Content-Disposition value in those bodies and in the
  hostile requests.
- FuzzHTTPHead: the head of every hostile request, prefixed with a split byte.
- FuzzChunked: the chunked bodies of the hostile requests, prefixed with a split byte.
- FuzzJWT: every bearer token and cookie token of Tests/Fixtures/hostile-auth, and its JWKS.

Seeds longer than the fuzzers' -max_len (8192) are cut. Hand-written seeds (seed0…) stay.
"""
import hashlib, json, os, re

root = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
seeds = os.path.join(root, "Fuzz/Seeds")
limit = 8192
written = {}


def write(target, data):
    data = data[:limit]
    directory = os.path.join(seeds, target)
    os.makedirs(directory, exist_ok=True)
    name = "fixture-" + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(directory, name), "wb") as handle:
        handle.write(data)
    written[target] = written.get(target, 0) + 1


def split_prefix(data):
    digest = hashlib.sha1(data).digest()
    return digest[:4]


def header_values(block):
    for line in re.split(rb"\r?\n", block):
        name, _, value = line.partition(b":")
        if name.strip().lower() in (b"content-type", b"content-disposition") and value.strip():
            write("FuzzHeaderValues", value.strip())


corpus = json.load(open(os.path.join(root, "Tests/Fixtures/corpus/manifest.json")))["cases"]
for case in corpus:
    body = open(os.path.join(root, "Tests/Fixtures/corpus", case["body"]), "rb").read()
    if case.get("http"):
        head, _, body = body.partition(b"\r\n\r\n")
        header_values(head)
    boundary = (case.get("boundary") or "").encode()
    if boundary:
        body = body.replace(boundary, b"b0undary")
    write("FuzzMultipart", split_prefix(body) + body)
    for block in re.findall(rb"\r?\n\r?\n|((?:[^\r\n]+\r?\n)+)\r?\n", body[:limit]):
        if block:
            header_values(block)

hostile = json.load(open(os.path.join(root, "Tests/Fixtures/hostile/manifest.json")))["cases"]
for case in hostile:
    request = open(os.path.join(root, "Tests/Fixtures/hostile", case["file"]), "rb").read()
    head, separator, body = request.partition(b"\r\n\r\n")
    write("FuzzHTTPHead", bytes([len(head) % 256]) + head + separator)
    header_values(head)
    if re.search(rb"(?im)^transfer-encoding:.*chunked", head):
        write("FuzzChunked", bytes([len(body) % 256]) + body)
    match = re.search(rb'boundary="?([^";\r\n]+)', head)
    if match and body:
        write("FuzzMultipart", split_prefix(body) + body.replace(match.group(1), b"b0undary"))
auth = json.load(open(os.path.join(root, "Tests/Fixtures/hostile-auth/manifest.json")))["cases"]
for case in auth:
    request = open(os.path.join(root, "Tests/Fixtures/hostile-auth", case["file"]), "rb").read()
    for match in re.finditer(rb"(?im)^(?:authorization: bearer |cookie: .*?session=)([^\r\n;]*)", request):
        if match.group(1):
            write("FuzzJWT", match.group(1))
write("FuzzJWT", open(os.path.join(root, "Tests/Fixtures/hostile-auth/jwks.json"), "rb").read())
print("fuzz seeds: " + ", ".join(f"{target} {count}" for target, count in sorted(written.items())))
