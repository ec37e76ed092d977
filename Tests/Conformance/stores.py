"""The object stores of the conformance matrix's second table, each behind a recording tap.

Every store is started on a free loopback port and fronted by a `Tap`, a TCP relay that passes
the bytes through unchanged and keeps a copy of what was sent to the store, so a cell can say
what the store itself received: the fields in order, exactly one credential of FormGate's (the
client's forged one dropped), the file last and byte-exact, a Content-Length. Each store then
answers for itself: moto (S3) stores the object and boto3 reads it back (moto checks no POST
signature, so `S3.verify` checks FormGate's SigV4 signature and policy as S3 would); the OSS
and COS mocks (oss_post_mock.py, cos_post_mock.py) verify the signature, expiry and every
condition, refuse a field sent twice, and give the object back with `GET /KEY`; the Qiniu mock
verifies the token's signature, expiry and scope, and its answer names the key, sha256 and type
it stored.
"""
import base64, email.parser, email.policy, hashlib, hmac, json, os, socket, subprocess, threading, time
import urllib.parse, urllib.request

resources = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ProxyIntegrationTests", "Resources")
TITLE = "holiday-2026"
# What a client might send to widen its grant: a policy that allows anything until 2099.
FORGED_POLICY = base64.b64encode(b'{"expiration":"2099-01-01T00:00:00.000Z","conditions":[]}').decode()
SNIFF = "      sniff: { bytes: 4096, content_type: override }\n"


class Tap:
    """A TCP relay to 127.0.0.1:`target` that keeps every byte each connection sends."""

    def __init__(self, target):
        self.target, self.streams, self.lock = target, [], threading.Lock()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.listener.accept()
            threading.Thread(target=self.relay, args=(client,), daemon=True).start()

    def relay(self, client):
        upstream, record = socket.create_connection(("127.0.0.1", self.target)), bytearray()
        with self.lock:
            self.streams.append(record)
        answers = threading.Thread(target=copy, args=(upstream, client, None, None), daemon=True)
        answers.start()
        copy(client, upstream, record, self.lock)
        answers.join()
        client.close()
        upstream.close()

    def posts(self):
        """Every whole POST the store received so far, {(connection, offset): (headers, body)}
        with lower-case header names (FormGate reuses its upstream connections, so the order of
        the connections is not the order of the requests)."""
        with self.lock:
            streams = [bytes(stream) for stream in self.streams]
        found = {}
        for connection, stream in enumerate(streams):
            at = 0
            while (end := stream.find(b"\r\n\r\n", at)) >= 0:
                lines = stream[at:end].decode("latin-1").split("\r\n")
                headers = {name.strip().lower(): value.strip()
                           for name, _, value in (line.partition(":") for line in lines[1:])}
                if "transfer-encoding" in headers:  # chunked: no store here reads it
                    found[connection, at] = (headers, None)
                    break
                length = int(headers.get("content-length", "0"))
                body = stream[end + 4:end + 4 + length]
                if len(body) < length:
                    break
                if lines[0].startswith("POST "):
                    found[connection, at] = (headers, body)
                at = end + 4 + len(body)
        return found


def copy(source, sink, record, lock):
    """Relays one direction until its end, passing a half-close on (or on an error, both)."""
    try:
        while data := source.recv(65536):
            if record is not None:
                with lock:
                    record += data
            sink.sendall(data)
        sink.shutdown(socket.SHUT_WR)
    except OSError:
        for end in (sink, source):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def form_parts(headers, body):
    """A multipart body as [(name, filename, content_type, bytes)] in the order sent."""
    head = f"Content-Type: {headers['content-type']}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + body)
    parts = []
    for part in message.iter_parts():
        params = dict(part.get_params(header="content-disposition") or [])
        parts.append((params.get("name"), params.get("filename"), part.get("Content-Type"),
                      part.get_payload(decode=True)))
    return parts


def wait_for_port(port, process):
    deadline = time.time() + 60
    while time.time() < deadline and process.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


class Store:
    """One provider's store: the route to it, the client's form, and what it says it stored."""

    name, provider, forged, text_field = "", "", "policy", ""

    def __init__(self, port):
        self.tap = Tap(port)
        self.port = port
        self.path = f"/{self.name}"

    def form(self):
        """The client's text fields, before its one file `file`: no credentials, one forgery."""
        return [(self.text_field, TITLE), (self.forged, FORGED_POLICY)]

    def route(self):
        return (f"  - name: {self.name}\n    match: {{ path: {self.path} }}\n"
                f"    upstream: http://127.0.0.1:{self.tap.port}\n    request_body: buffer\n"
                f"    multipart:\n{SNIFF}      inject:\n        - {self.injection()}\n")

    def check(self, key, answer, seen, sha256):
        """The problems of one cell: `key` is the access log's object_key, `answer` the client's
        response text, `seen` the POSTs the store had before, `sha256` the file's digest."""
        posts = [post for place, post in self.tap.posts().items() if place not in seen]
        if len(posts) != 1:
            return [f"the store received {len(posts)} POSTs"]
        headers, body = posts[0]
        if body is None:
            return ["the store received a body without Content-Length"]
        parts = form_parts(headers, body)
        names = [name for name, _, _, _ in parts]
        fields = {name: data.decode() for name, filename, _, data in parts if filename is None}
        problems = []
        if names[-1] != "file" or parts[-1][1] is None:
            problems.append(f"the file is not last: {names}")
        elif hashlib.sha256(parts[-1][3]).hexdigest() != sha256:
            problems.append("the store received other file bytes")
        credentials = [data.decode() for name, _, _, data in parts if name == self.forged]
        if dict(self.form())[self.forged] in credentials:
            problems.append(f"{self.forged}: the store received the forged one ({len(credentials)} in all)")
        elif len(credentials) != 1:
            problems.append(f"{self.forged}: the store received {len(credentials)}")
        if fields.get(self.text_field) != TITLE:
            problems.append(f"{self.text_field}: {fields.get(self.text_field)!r}")
        if fields.get("key") != key:
            problems.append(f"key field {fields.get('key')!r} is not the logged {key!r}")
        problems += self.verify(fields, len(parts[-1][3]))
        try:
            stored = self.stored(key, answer)
        except Exception as error:  # noqa: BLE001 - a missing object is a failed cell
            return problems + [f"reading {key} back: {type(error).__name__}: {str(error)[:300]}"]
        if stored["sha256"] != sha256:
            problems.append(f"stored sha256 {stored['sha256']}")
        if stored["content_type"] != "image/png":
            problems.append(f"stored Content-Type {stored['content_type']!r}")
        return problems + ([stored["problem"]] if "problem" in stored else [])

    def verify(self, fields, size):
        """What this store's own check leaves out (nothing for the verifying mocks)."""
        return []

    def stored(self, key, answer):
        """The object as the store keeps it: {"sha256", "content_type"}."""
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/{urllib.parse.quote(key)}", timeout=30) as got:
            data = got.read()
            return {"sha256": hashlib.sha256(data).hexdigest(), "content_type": got.headers["Content-Type"]}


class S3(Store):
    """moto in server mode (a real S3 implementation), path-style: POST /BUCKET."""

    name, provider, text_field = "s3", "s3_post", "x-amz-meta-title"
    bucket, access_key, secret_key, region = "conformance", "conformance-ak", "conformance-sk", "us-east-1"

    def __init__(self, work, sdk_python, free_port, processes):
        port = free_port()
        self.sdk_python, self.endpoint = sdk_python, f"http://127.0.0.1:{port}"
        log = open(os.path.join(work, "moto.log"), "w")
        process = subprocess.Popen([os.path.join(os.path.dirname(sdk_python), "moto_server"), "-p", str(port)],
                                   stdout=log, stderr=log)
        processes.append(process)
        wait_for_port(port, process)
        self.sdk("create-bucket", self.bucket)
        super().__init__(port)
        self.path = f"/{self.bucket}"

    def sdk(self, *arguments):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "s3_sdk.py")
        result = subprocess.run([self.sdk_python, script, self.endpoint, *arguments], capture_output=True,
                                timeout=60)
        if result.returncode != 0:
            raise RuntimeError(f"s3_sdk.py {arguments}: {result.stderr.decode(errors='replace')[-400:]}")
        return json.loads(result.stdout)

    def injection(self):
        return ("{ before: file, s3_post: { access_key: %s, secret_key: %s, region: %s, bucket: %s, "
                "key: \"conformance/{uuid}{ext}\", ttl: 15m, conditions: { %s: { starts_with: \"\" } } } }"
                % (self.access_key, self.secret_key, self.region, self.bucket, self.text_field))

    def verify(self, fields, size):
        """What S3 checks and moto does not: the SigV4 signature of the policy, its expiry, that
        every field is one of its conditions and meets it, and the file's size range."""
        problems = []
        policy = fields.get("policy", "")
        date = fields.get("x-amz-date", "")[:8]
        signing = ("AWS4" + self.secret_key).encode()
        for part in (date, self.region, "s3", "aws4_request"):
            signing = hmac.new(signing, part.encode(), hashlib.sha256).digest()
        if fields.get("x-amz-signature") != hmac.new(signing, policy.encode(), hashlib.sha256).hexdigest():
            problems.append("x-amz-signature does not sign the policy with the secret")
        if fields.get("x-amz-credential") != f"{self.access_key}/{date}/{self.region}/s3/aws4_request":
            problems.append(f"x-amz-credential {fields.get('x-amz-credential')}")
        document = json.loads(base64.b64decode(policy))
        if document["expiration"] <= time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()):
            problems.append(f"expired policy {document['expiration']}")
        covered = {"file", "policy", "x-amz-signature"}
        for condition in document["conditions"]:
            if isinstance(condition, dict):
                (name, want), = condition.items()
                got = self.bucket if name == "bucket" else fields.get(name)
                covered.add(name)
            elif condition[0] in ("eq", "starts-with"):
                name, want = condition[1].lstrip("$"), condition[2]
                got = fields.get(name, "")
                got = got[:len(want)] if condition[0] == "starts-with" else got
                covered.add(name)
            elif condition[0] == "content-length-range":
                name, got, want = "file", condition[1] <= size <= condition[2], True
            else:
                problems.append(f"unknown condition {condition}")
                continue
            if got != want:
                problems.append(f"condition {condition} not met by {got!r}")
        if uncovered := set(fields) - covered:
            problems.append(f"fields no condition covers: {sorted(uncovered)}")
        return problems

    def stored(self, key, answer):
        found = self.sdk("get", self.bucket, key)
        if found["metadata"] != {"title": TITLE}:
            found["problem"] = f"metadata {found['metadata']}"
        return found


class PostMock(Store):
    """oss_post_mock.py / cos_post_mock.py: verifying mocks, POST / stores, GET /KEY reads."""

    script, region, extra = "", "cn-hangzhou", ""
    access_key, secret_key, bucket = "conformance-ak", "conformance-sk", "conformance"

    def __init__(self, start, python):
        super().__init__(start([python, os.path.join(resources, self.script), "--access-key", self.access_key,
                                "--secret-key", self.secret_key, "--bucket", self.bucket, "--region", self.region]))


class OSSv1(PostMock):
    name, provider, text_field, script, version = "oss-v1", "oss_post", "x-oss-meta-title", "oss_post_mock.py", "v1"

    def injection(self):
        return ("{ before: file, oss_post: { access_key: %s, secret_key: %s, region: %s, bucket: %s, "
                "key: \"conformance/{uuid}{ext}\", ttl: 15m, version: %s } }"
                % (self.access_key, self.secret_key, self.region, self.bucket, self.version))


class OSSv4(OSSv1):
    name, version = "oss-v4", "v4"


class COS(PostMock):
    name, provider, text_field, script = "cos", "cos_post", "x-cos-meta-title", "cos_post_mock.py"
    bucket, region = "conformance-1250000000", "ap-guangzhou"

    def injection(self):
        return ("{ before: file, cos_post: { secret_id: %s, secret_key: %s, bucket: %s, "
                "key: \"conformance/{uuid}{ext}\", ttl: 15m } }" % (self.access_key, self.secret_key, self.bucket))


class Qiniu(Store):
    """qiniu_mock.py, which verifies the token and answers with what it stored; Qiniu's injection
    style: the token and the key as two named injections, the client's own dropped."""

    name, provider, forged, text_field = "qiniu", "qiniu", "token", "x:title"
    access_key, secret_key, bucket = "conformance-ak", "conformance-sk", "conformance"

    def __init__(self, start, python):
        super().__init__(start([python, os.path.join(resources, "qiniu_mock.py"), self.access_key,
                                self.secret_key, self.bucket]))

    def form(self):
        return [(self.text_field, TITLE), (self.forged, "forged-ak:forged-sign:" + FORGED_POLICY)]

    def route(self):
        return (f"  - name: {self.name}\n    match: {{ path: {self.path} }}\n"
                f"    upstream: http://127.0.0.1:{self.tap.port}\n    request_body: buffer\n    multipart:\n"
                f"      drop_fields: [token, key]\n{SNIFF}      filename: \"{{uuid}}{{ext}}\"\n      inject:\n"
                f"        - {{ name: token, before: file, qiniu: {{ access_key: {self.access_key}, "
                f"secret_key: {self.secret_key}, scope: \"{self.bucket}:conformance/{{filename}}\", ttl: 15m }} }}\n"
                f"        - {{ name: key, before: file, value: \"conformance/{{filename}}\" }}\n")

    def stored(self, key, answer):
        receipt = json.loads(answer)
        found = {"sha256": receipt.get("sha256"), "content_type": receipt.get("mimeType")}
        if receipt.get("key") != key or self.text_field not in receipt.get("fields", []):
            found["problem"] = f"receipt {receipt}"
        return found
