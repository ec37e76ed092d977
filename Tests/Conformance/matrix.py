#!/usr/bin/env python3
"""The conformance matrix: real clients x real servers, through FormGate.

Clients: curl, Python requests, Node fetch + FormData, Go mime/multipart, a hand-built body in
the iOS dialects of DESIGN.md, and headless Chromium posting a FormData from a page served
through FormGate. Servers: PHP ($_FILES), Python Werkzeug, Node's Request.formData(), Go's
ParseMultipartForm, and FormGate's demo upstream. One FormGate (the release build) fronts them
all, one route per server, each with the same rules: rename a field, drop the client's token,
inject a field, sniff types (override) and rename files from a template. Every cell must show
the server exactly the expected fields and byte-exact files with the sniffed types and the new
names.

The second table, the object stores: curl, requests, Node fetch and Chromium upload one text
field, a forged credential and one file `file` (last) through a second FormGate whose routes
inject each provider's credential before the file (`request_body: buffer`, types sniffed) to
S3 (moto in server mode), Aliyun OSS (V1 and V4), Tencent COS and Qiniu (the verifying mocks of
Tests/ProxyIntegrationTests/Resources). A cell passes when the store received FormGate's
credential and not the forged one, accepted it, and holds the object under the key the access
log names, byte-exact (sha256), with the sniffed Content-Type (stores.py says how each is read).

Writes .build/conformance.json (`cells` and `store_cells`); exits 1 if any cell fails. Run it
with Debian's Python (python3-requests, python3-werkzeug), Debian's tools first on PATH and
FORMGATE_SDK_PYTHON naming the SDK venv's python (boto3, moto: `make sdk-venv`), as `make
conformance` does:

    PATH=/usr/bin:$PATH /usr/bin/python3 Tests/Conformance/matrix.py [FORMGATE_BINARY]
"""
import hashlib, html, http.client, http.server, json, os, random, re, shutil, socket, subprocess
import sys, tempfile, threading, time, urllib.parse

import stores

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
formgate = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, ".build/release/formgate")
work = os.path.join(root, ".build/conformance")
os.makedirs(work, exist_ok=True)
processes = []

# --- fixtures: a PNG declared as JPEG, a text file full of boundary look-alikes, a PDF with a
# UTF-8 name declared as octet-stream.
rng = random.Random(7578)
fixtures = tempfile.mkdtemp(prefix="formgate-conformance-")
png = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00\x00\x00\x01\x00\x08\x06\x00\x00\x00"
       + bytes(rng.getrandbits(8) for _ in range(200_000)) + b"\r\n--\r\n--boundary--\r\n")
notes = ("Line one\r\n--\r\n--WebKitFormBoundary\r\n\r\nContent-Disposition: form-data; name=\"x\"\r\n"
         "ünïcödé ☀ and a lone \n and \r in it\r\n" * 50).encode()
pdf = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n" + bytes(
    rng.getrandbits(8) for _ in range(30_000)) + b"\n%%EOF\n"
contents = {"photo.jpg": png, "notes.txt": notes, "résumé 2026.pdf": pdf}
for name, content in contents.items():
    with open(os.path.join(fixtures, name), "wb") as handle:
        handle.write(content)
sha = {name: hashlib.sha256(content).hexdigest() for name, content in contents.items()}

expected_fields = {"title": "Holiday ☀ 2026", "via": "formgate"}
expected_files = {
    "file": ("file-photo.png", "image/png", len(png), sha["photo.jpg"]),
    "notes": ("notes-notes.txt", "text/plain", len(notes), sha["notes.txt"]),
    "cv": ("cv-résumé 2026.pdf", "application/pdf", len(pdf), sha["résumé 2026.pdf"]),
}


def start(command, cwd=None, env=None, name=None):
    """Starts a server that prints `listening on HOST:PORT` on stderr; returns its port."""
    log = open(os.path.join(work, (name or os.path.basename(command[-1]).split(".")[0]) + ".log"), "w+")
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.PIPE)
    processes.append(process)
    deadline = time.time() + 60
    while time.time() < deadline:
        line = process.stderr.readline().decode(errors="replace")
        if "listening on " in line:
            threading.Thread(target=lambda: shutil.copyfileobj(process.stderr, open(os.devnull, "wb")),
                             daemon=True).start()
            return int(line.split("listening on ")[1].split()[0].rstrip(",").rsplit(":", 1)[1])
        if process.poll() is not None:
            break
    sys.exit(f"conformance: {command} did not start")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def tool(name):
    path = shutil.which(name)
    if not path:
        sys.exit(f"conformance: {name} is not installed (make test installs it)")
    return path


sdk_python = os.environ.get("FORMGATE_SDK_PYTHON", "")
if not os.access(sdk_python, os.X_OK):
    sys.exit("conformance: FORMGATE_SDK_PYTHON names no python (make sdk-venv makes .build/sdk-venv)")


# --- the page and fixtures, served as the default upstream (FormGate passes GETs through).
class Static(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        path = self.path.split("?")[0]
        if path == "/conformance.html":
            body, kind = open(os.path.join(here, "page.html"), "rb").read(), "text/html; charset=utf-8"
        elif path.startswith("/fixtures/"):
            from urllib.parse import unquote
            name = unquote(path[len("/fixtures/"):])
            if name not in contents:
                return self.send_error(404)
            body, kind = contents[name], "application/octet-stream"
        else:
            return self.send_error(404)
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


static = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Static)
threading.Thread(target=static.serve_forever, daemon=True).start()

# --- servers
go_env = dict(os.environ, GOCACHE=os.path.join(work, "gocache"), GOPATH=os.path.join(work, "gopath"),
              GO111MODULE="off", GOFLAGS="")
for program in ("go_server", "go_client"):
    subprocess.run([tool("go"), "build", "-o", os.path.join(work, program), os.path.join(here, program + ".go")],
                   env=go_env, check=True)
php_port = free_port()
processes.append(subprocess.Popen([tool("php"), "-S", f"127.0.0.1:{php_port}", os.path.join(root, "docker/php/upload.php")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
servers = {
    "php": php_port,
    "werkzeug": start([sys.executable, os.path.join(here, "werkzeug_server.py")]),
    "node": start([tool("node"), os.path.join(here, "node_server.mjs")]),
    "go": start([os.path.join(work, "go_server")]),
    "demo": start([formgate, "demo-upstream", "--listen", "127.0.0.1:0"]),
}
for _ in range(100):
    try:
        socket.create_connection(("127.0.0.1", php_port), timeout=1).close()
        break
    except OSError:
        time.sleep(0.1)

rules = """    multipart:
      rename_fields: { upload: file }
      drop_fields: [token]
      sniff: { bytes: 4096, content_type: override }
      filename: "{field}-{basename}{ext}"
      inject: [{ name: via, value: formgate }]
"""
config = os.path.join(work, "formgate.yaml")
with open(config, "w") as handle:
    handle.write(f"listen: 127.0.0.1:0\nworkers: 2\nupstream: http://127.0.0.1:{static.server_port}\n"
                 "access_log: off\nroutes:\n")
    for name, port in servers.items():
        # PHP's built-in server reads no chunked bodies: buffer mode sends a Content-Length.
        mode = "buffer" if name == "php" else "stream"
        handle.write(f"  - name: {name}\n    match: {{ path: /{name} }}\n    upstream: http://127.0.0.1:{port}\n"
                     f"    request_body: {mode}\n" + rules)
proxy = start([formgate, "run", "-c", config])
base = f"http://127.0.0.1:{proxy}"

# --- the object stores, each behind a tap, and a second FormGate in front of them whose access
# log names the key each upload was granted.
try:
    store_list = [stores.S3(work, sdk_python, free_port, processes)] + [
        kind(lambda command, kind=kind: start(command, name=kind.name), sys.executable)
        for kind in (stores.OSSv1, stores.OSSv4, stores.COS, stores.Qiniu)]
except Exception as error:  # noqa: BLE001 - the servers started so far must not outlive the run
    for process in processes:
        process.terminate()
    sys.exit(f"conformance: the object stores did not start: {error}")
access_log = os.path.join(work, "stores-access.log")
open(access_log, "w").close()
store_config = os.path.join(work, "stores.yaml")
with open(store_config, "w") as handle:
    handle.write(f"listen: 127.0.0.1:0\nworkers: 2\nupstream: http://127.0.0.1:{static.server_port}\n"
                 f"access_log: {access_log}\nroutes:\n" + "".join(store.route() for store in store_list))
store_base = f"http://127.0.0.1:{start([formgate, 'run', '-c', store_config])}"


# --- what each server saw, in one shape: {"fields": {name: value}, "files": {field: (filename, type, size, sha256)}}
def normalize(server, text):
    data = json.loads(text)
    if server == "php":
        fields = data["post"] or {}
        files = [{"field": f["field"], "filename": f["name"], "type": f["type"], "size": f["size"],
                  "sha256": f["sha256"]} for f in data["files"]]
    elif server == "demo":
        fields = {f["name"]: f["value"] for f in data["fields"]}
        files = [{"field": f["name"], "filename": f["filename"], "type": f["content_type"], "size": f["size"],
                  "sha256": f.get("sha256")} for f in data["files"]]
    else:
        fields, files = data["fields"], data["files"]
    return {"fields": fields,
            "files": {f["field"]: (f["filename"], (f["type"] or "").split(";")[0].strip().lower(), f["size"],
                                   f["sha256"]) for f in files}}


# --- clients: each returns the server's response text for a URL
def curl(url):
    arguments = [tool("curl"), "-sS", "--fail-with-body", "-F", "title=Holiday ☀ 2026", "-F", "token=client-supplied",
                 "-F", f"upload=@{fixtures}/photo.jpg;type=image/jpeg",
                 "-F", f"notes=@{fixtures}/notes.txt;type=text/plain",
                 "-F", f"cv=@{fixtures}/résumé 2026.pdf;type=application/octet-stream", url]
    return subprocess.run(arguments, capture_output=True, check=True).stdout.decode()


def python_requests(url):
    import requests
    files = {"upload": ("photo.jpg", png, "image/jpeg"), "notes": ("notes.txt", notes, "text/plain"),
             "cv": ("résumé 2026.pdf", pdf, "application/octet-stream")}
    response = requests.post(url, data={"title": "Holiday ☀ 2026", "token": "client-supplied"}, files=files,
                             timeout=30)
    response.raise_for_status()
    return response.content.decode()


def node_fetch(url):
    return subprocess.run([tool("node"), os.path.join(here, "node_client.mjs"), url, fixtures],
                          capture_output=True, check=True).stdout.decode()


def go_multipart(url):
    return subprocess.run([os.path.join(work, "go_client"), url, fixtures], capture_output=True,
                          check=True).stdout.decode()


def ios_dialect(url):
    """Hand-written iOS bodies: a leading CRLF, unquoted parameters, `Name:value` without a space,
    Content-Transfer-Encoding: binary, a `filename*` alone, and no CRLF after the close delimiter."""
    boundary = "Boundary+0xAbCdEf12345"
    body = (f"\r\n--{boundary}\r\nContent-Disposition: form-data; name=title\r\n\r\nHoliday ☀ 2026\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=token\r\n\r\nclient-supplied\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=upload; filename=photo.jpg\r\n"
            f"Content-Type:image/jpeg\r\nContent-Transfer-Encoding: binary\r\n\r\n").encode() + png
    body += (f"\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"notes\"; filename=\"notes.txt\"\r\n"
             f"Content-Type: text/plain\r\n\r\n").encode() + notes
    body += (f"\r\n--{boundary}\r\nContent-Disposition: form-data; name=cv; "
             f"filename*=UTF-8''r%C3%A9sum%C3%A9%202026.pdf\r\nContent-Type: application/octet-stream\r\n\r\n"
             ).encode() + pdf + f"\r\n--{boundary}--".encode()
    path = url.split(str(proxy), 1)[1]
    connection = http.client.HTTPConnection("127.0.0.1", proxy, timeout=30)
    connection.request("POST", path, body=body,
                       headers={"Content-Type": f"multipart/form-data; boundary={boundary}",
                                "User-Agent": "MyApp/1.0 CFNetwork/1410.0.3 Darwin/22.6.0"})
    response = connection.getresponse()
    text = response.read().decode()
    if response.status != 200:
        raise RuntimeError(f"status {response.status}: {text}")
    return text


def chromium(url):
    return browse(base, "target=" + url.split(str(proxy), 1)[1])


def browse(origin, query):
    """Headless Chromium on the page served by the FormGate at `origin`; what the page shows."""
    profile = tempfile.mkdtemp(prefix="formgate-chromium-")
    try:
        result = subprocess.run(
            [tool("chromium"), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             f"--user-data-dir={profile}", "--virtual-time-budget=30000", "--dump-dom",
             f"{origin}/conformance.html?{query}"], capture_output=True, timeout=120)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    dom = result.stdout.decode(errors="replace")
    match = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
    text = html.unescape(match.group(1)) if match else dom[-500:] + result.stderr.decode(errors="replace")[-500:]
    if not text.startswith("RESULT:"):
        raise RuntimeError(text[:400])
    return text[len("RESULT:"):]


clients = {"curl": curl, "python-requests": python_requests, "node-fetch": node_fetch, "go-multipart": go_multipart,
           "ios-dialect": ios_dialect, "chromium": chromium}


# --- the store clients: each posts `form` (text fields) and then the one file, returns the answer
def checked(arguments):
    result = subprocess.run(arguments, capture_output=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError((result.stdout + result.stderr).decode(errors="replace")[-400:])
    return result.stdout.decode()


def curl_store(url, form):
    strings = [argument for name, value in form for argument in ("--form-string", f"{name}={value}")]
    return checked([tool("curl"), "-sS", "--fail-with-body", *strings, "-F",
                    f"file=@{fixtures}/photo.jpg;type=image/jpeg", url])


def python_requests_store(url, form):
    import requests
    response = requests.post(url, data=form, files={"file": ("photo.jpg", png, "image/jpeg")}, timeout=30)
    response.raise_for_status()
    return response.content.decode()


def node_fetch_store(url, form):
    return checked([tool("node"), os.path.join(here, "node_client.mjs"), url, fixtures, "store", json.dumps(form)])


def chromium_store(url, form):
    target = url.split(store_base, 1)[1]
    return browse(store_base, urllib.parse.urlencode({"target": target, "form": "store", "fields": json.dumps(form)}))


store_clients = {"curl": curl_store, "python-requests": python_requests_store, "node-fetch": node_fetch_store,
                 "chromium": chromium_store}
key_shape = re.compile(r"conformance/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.png")


def logged(route):
    """The route's access-log records so far (whole lines only)."""
    with open(access_log) as handle:
        lines = handle.read().split("\n")[:-1]
    return [record for record in map(json.loads, lines) if record.get("route") == route]


def store_cell(client, store):
    seen, before = set(store.tap.posts()), len(logged(store.name))
    answer = client(store_base + store.path, store.form())
    deadline = time.time() + 30  # FormGate logs from its own thread, after the answer
    while len(records := logged(store.name)) <= before:
        if time.time() > deadline:
            raise RuntimeError(f"no access-log line for route {store.name}")
        time.sleep(0.05)
    key = records[before].get("object_key") or ""
    providers = records[before].get("providers")
    problems = [] if providers == [store.provider] else [f"providers {providers}"]
    if not key_shape.fullmatch(key):
        return problems + [f"object_key {key!r}"]
    return problems + store.check(key, answer, seen, sha["photo.jpg"])


cells, store_cells = [], []
try:
    for client_name, client in clients.items():
        for server in servers:
            url = f"{base}/{server}/upload"
            problems = []
            try:
                seen = normalize(server, client(url))
                if seen["fields"] != expected_fields:
                    problems.append(f"fields {seen['fields']}")
                for field, want in expected_files.items():
                    got = seen["files"].get(field)
                    if got != want:
                        problems.append(f"{field}: {got} != {want}" if got else f"{field} missing")
                if set(seen["files"]) != set(expected_files):
                    problems.append(f"files {sorted(seen['files'])}")
            except Exception as error:  # noqa: BLE001 - every failure is a failed cell
                problems.append(f"{type(error).__name__}: {str(error)[:400]}")
            cells.append({"client": client_name, "server": server, "ok": not problems, "problems": problems})
            print(f"conformance: {client_name:16} -> {server:9} {'ok' if not problems else 'FAIL ' + '; '.join(problems)}",
                  flush=True)
    for client_name, client in store_clients.items():
        for store in store_list:
            problems = []
            try:
                problems = store_cell(client, store)
            except Exception as error:  # noqa: BLE001 - every failure is a failed cell
                problems.append(f"{type(error).__name__}: {' '.join(str(error).split())[:400]}")
            store_cells.append({"client": client_name, "provider": store.name, "ok": not problems,
                                "problems": problems})
            verdict = "FAIL " + "; ".join(problems) if problems else "ok"
            print(f"conformance: {client_name:16} -> {store.name:9} {verdict}", flush=True)
finally:
    for process in processes:
        process.terminate()
    static.shutdown()
    shutil.rmtree(fixtures, ignore_errors=True)

failed = [cell for cell in cells + store_cells if not cell["ok"]]
json.dump({"clients": list(clients), "servers": list(servers), "cells": cells,
           "store_clients": list(store_clients), "providers": [store.name for store in store_list],
           "store_cells": store_cells,
           "date": time.strftime("%Y-%m-%d")}, open(os.path.join(root, ".build/conformance.json"), "w"), indent=1)
total = len(cells) + len(store_cells)
print(f"conformance: {total - len(failed)} of {total} cells pass")
sys.exit(1 if failed else 0)
