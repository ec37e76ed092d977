"""The resumable-upload row of `make bench` (scripts/bench.py calls `measure` and `lines`).

One file of BENCH_LARGE_MIB (1 GiB) goes through a FormGate `tus:` route as a tus client sends
it: a creation, then PATCHes of BENCH_TUS_CHUNK_MIB (8 MiB) each, every one acknowledged only
once FormGate synced it to its store (a directory in the run directory, on the same disk), the
last one answered when FormGate has delivered the whole file upstream as one multipart POST
through the rules route's rules and the sink answered it. The sink verifies that POST as it
verifies the rules candidate's (X-Bench `rules`, set on the route: "via" injected, "upload"
renamed "file", file-<uuid>.png, image/png, every byte): the run fails unless it did.

The client is this script (Python's http.client, the file's bytes read with os.pread from the
body file scripts/bench/h2body wrote for the same seed and size as the 1 × 1 GiB case, its
multipart prefix and suffix skipped), so the file is the very content the rules candidate
posts in one request. MB/s is the file's size over the time from the creation to the last
answer; proxy CPU is FormGate's utime + stime over the same time, per GiB; peak RSS its VmHWM.
"""
import http.client, os, time

CHUNK_MIB = int(os.environ.get("BENCH_TUS_CHUNK_MIB", "8"))
# scripts/bench/payload: the client's body before the file's content (fields and the file's head).
BOUNDARY = "BenchBoundary-7MA4YWxkTrZu0gW-kq9"
PREFIX = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nbench\r\n--{BOUNDARY}\r\n"
          "Content-Disposition: form-data; name=\"upload\"; filename=\"bench.png\"\r\n"
          "Content-Type: image/png\r\n\r\n").encode()


def config(port, sink_port, cores, store, seed, size, rules):
    """FormGate with one tus route whose deliveries go through `rules` (the rules candidate's)."""
    return (f"listen: 127.0.0.1:{port}\nworkers: {cores}\nupstream: http://127.0.0.1:{sink_port}\n"
            "access_log: off\nlimits: { body_bytes: 64GiB, file_bytes: 64GiB }\n"
            "routes:\n  - name: tus\n    match: { path: /files }\n"
            f"    headers: {{ set: {{ X-Bench: \"rules {seed} {size}\" }} }}\n"
            f"    tus:\n      store: {store}\n      max_size: 64GiB\n"
            "      deliver: { path: /upload, file_field: upload, fields: [title] }\n" + rules)


def b64(text):
    import base64
    return base64.b64encode(text.encode()).decode()


def upload(port, body_path, size):
    """Creation, then PATCHes of CHUNK_MIB from the file's content: (seconds, PATCHes, final status, answer)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    base = {"Tus-Resumable": "1.0.0"}
    began = time.monotonic()
    connection.request("POST", "/files", headers=dict(base, **{
        "Upload-Length": str(size),
        "Upload-Metadata": f"filename {b64('bench.png')},title {b64('bench')},filetype {b64('image/png')}"}))
    created = connection.getresponse()
    created.read()
    if created.status != 201:
        raise RuntimeError(f"tus creation answered {created.status}")
    location = created.getheader("Location").split("/files/", 1)[1]
    chunk = CHUNK_MIB << 20
    offset, patches, status, answer = 0, 0, None, b""
    with open(body_path, "rb") as body:
        while offset < size:
            count = min(chunk, size - offset)
            data = os.pread(body.fileno(), count, len(PREFIX) + offset)
            connection.request("PATCH", f"/files/{location}", body=data, headers=dict(base, **{
                "Upload-Offset": str(offset), "Content-Type": "application/offset+octet-stream",
                "Content-Length": str(count)}))
            response = connection.getresponse()
            answer = response.read()
            status = response.status
            patches += 1
            offset += count
            if offset < size and (status != 204 or response.getheader("Upload-Offset") != str(offset)):
                raise RuntimeError(f"PATCH at {offset - count} answered {status}: {answer[:200]!r}")
    connection.close()
    return time.monotonic() - began, patches, status, answer


def measure(bench, sink_port, seed, size):
    """One tus upload of `size` bytes of seed `seed` through a fresh FormGate; the figures, verified."""
    store = os.path.join(bench.work, "tus-store")
    os.makedirs(store, exist_ok=True)
    port = bench.free_port()
    path = os.path.join(bench.work, "tus.yaml")
    open(path, "w").write(config(port, sink_port, bench.cores, store, seed, size, bench.RULES))
    body_path = bench.body_file(seed, size)
    process = bench.spawn([bench.binary, "run", "-c", path], "tus.log")
    try:
        bench.wait_for(port, process)
        before, cpu0 = bench.sink_stats(sink_port), bench.cpu_seconds(process.pid)
        seconds, patches, status, answer = upload(port, body_path, size)
        cpu1, after = bench.cpu_seconds(process.pid), bench.sink_stats(sink_port)
        rss = bench.peak_rss_mib(process.pid)
    finally:
        bench.stop(process)
    delta = {key: after[key] - before[key] for key in after}
    if status != 200 or answer.strip() != b"ok":
        raise bench.BenchFailure(f"VERIFICATION FAILED for tus: the final PATCH answered {status}: {answer[:200]!r}")
    if delta["verified"] != 1 or delta["mismatches"] or delta["unverified"] or delta["file_bytes"] != size:
        raise bench.BenchFailure(f"VERIFICATION FAILED for tus: the sink counted {delta} for one {size}-byte upload")
    return dict(value=size / seconds / 1e6, proxy=(cpu1 - cpu0) / (size / (1 << 30)), rss=rss, patches=patches,
                seconds=seconds)


def lines(tus, rules, size_label):
    """The docs' and README's lines: the tus row beside one POST of the same file through the rules route."""
    if not tus:
        return []
    text = (f"Resumable upload (tus): one {size_label} file in {tus['patches']} PATCHes of {CHUNK_MIB} MiB, each "
            f"synced to the store before its 204, delivered upstream as one POST through the rules route's rules "
            f"(verified by the sink), once: {tus['value']:,.0f} MB/s, proxy CPU {tus['proxy']:.2f} s/GiB, peak RSS "
            f"{tus['rss']:.1f} MiB")
    if rules:
        text += (f"; the same file as one POST through the rules route (the 1 × {size_label} case's median): "
                 f"{rules['value']:,.0f} MB/s, {rules['proxy']:.2f} s/GiB ({tus['value'] / rules['value']:.2f}× "
                 "its throughput)")
    return [text + ".", ""]
