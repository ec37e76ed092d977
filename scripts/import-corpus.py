#!/usr/bin/env python3
"""Copy the shared multipart corpus into Tests/Fixtures/corpus and write manifest.json.

Run by a developer when the corpus changes (`python3 scripts/import-corpus.py ../shared/corpus`);
tests read only the copies. Each case's expected parts come from its source's own oracle
(werkzeug/busboy/dicer/python-multipart/formidable expectations), checked here against the
source's digests; FormGate's policy decisions (refusing what the source accepts, or keeping
raw bytes where the source decodes) are listed per case with the reason.
"""
import base64, hashlib, json, os, re, shutil, sys

import yaml

SRC = sys.argv[1] if len(sys.argv) > 1 else "../shared/corpus"
ROOT = os.path.join(os.path.dirname(__file__), "..", "Tests", "Fixtures", "corpus")

cases = []


def copy(rel):
    dst = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(os.path.join(SRC, rel), dst)
    return rel


def write_expected(case_id, index, data):
    rel = os.path.join("expected", case_id.replace("/", "__"), f"{index}.bin")
    dst = os.path.join(ROOT, rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with open(dst, "wb") as f:
        f.write(data)
    return rel


def part(case_id, index, name, data=None, filename=None, content_type=None, decode=None):
    p = {"name": name}
    if filename is not None:
        p["filename"] = filename
    if content_type is not None:
        p["content_type"] = content_type
    if data is not None:
        p["content"] = write_expected(case_id, index, data)
    if decode:
        p["decode"] = decode
    return p


# The refusal reason of bodies whose source only says "invalid" (each checked by reading the
# body: the reason names what is wrong in it).
SOURCE_INVALID_REASONS = {
    "python-multipart/CRLF_in_header": "invalidHeaderName",  # "Content-" then a line break: no colon
    "python-multipart/CR_in_header": "controlCharacterInHeader",
    "python-multipart/CR_in_header_value": "controlCharacterInHeader",
    "python-multipart/bad_end_of_headers": "controlCharacterInHeader",  # "\r\n\rQ": a bare CR
    "python-multipart/bad_header_char": "invalidHeaderName",  # "Content-<<<position"
    "python-multipart/bad_initial_boundary": "foreignDelimiter",  # "------WebQit..." before the first
    "python-multipart/empty_header": "invalidHeaderName",  # ": form-data": an empty name
    "python-multipart/empty_message_with_bad_end": "foreignDelimiter",  # "----boundary-X"
    "dicer/many-wrongboundary": "foreignDelimiter",  # declared LOLOLOL, delimited by WebKit's
    "dicer/many-noend": "unexpectedEnd",  # no closing delimiter
}


def add(case_id, body, source_verdict, verdict, parts=None, boundary=None, http=False,
        anomalies=None, error=None, limits=None, why=None):
    error = error or SOURCE_INVALID_REASONS.get(case_id)
    c = {"id": case_id, "body": body, "http": http, "source_verdict": source_verdict,
         "verdict": verdict}
    if boundary is not None:
        c["boundary"] = boundary
    if parts is not None:
        c["parts"] = parts
    if anomalies is not None:
        c["anomalies"] = anomalies
    if error is not None:
        c["error"] = error
    if limits:
        c["limits"] = limits
    if why:
        c["why"] = why
    cases.append(c)


def read(rel):
    with open(os.path.join(SRC, rel), "rb") as f:
        return f.read()


# --- werkzeug: browser captures -------------------------------------------------------------
wz = json.load(open(os.path.join(SRC, "werkzeug/expectations.json")))
for cap in wz["captures"]:
    body = copy("werkzeug/" + cap["body"])
    raw = read(body)
    case_id = "werkzeug/" + cap["body"].split("/")[0].replace(".http", "")
    if "ie7" in case_id:
        f = cap["files"][0]
        add(case_id, body, "valid", "accept", boundary=cap["boundary"],
            parts=[part(case_id, 0, "file-form-submit-flag", b"submitted"),
                   part(case_id, 1, "categoryId", b"2")],
            anomalies=["lf_line_endings"],
            why="only the first two parts are pinned by content; the test also checks the file part's name, filename and type")
        cases[-1]["parts_prefix"] = True
        cases[-1]["file_part"] = {"name": f["field"], "filename": f["filename"], "content_type": f["content_type"]}
        continue
    order = [m.group(1).decode() for m in re.finditer(rb'name="([^"]*)"', raw)]
    order = [n for n in order if n in ("file1", "file2", "text")]
    parts = []
    for i, n in enumerate(order):
        if n == "text":
            parts.append(part(case_id, i, "text", cap["text_value"].encode()))
        else:
            f = next(x for x in cap["files"] if x["field"] == n)
            data = read("werkzeug/" + f["expected_content_file"])
            assert hashlib.sha256(data).hexdigest() == f["expected_sha256"]
            copy("werkzeug/" + f["expected_content_file"])
            parts.append(part(case_id, i, n, data, f["filename"], f["content_type"]))
    add(case_id, body, "valid", "accept", boundary=cap["boundary"], parts=parts)
copy("werkzeug/expectations.json")

# --- python-multipart: adversarial bodies with YAML oracles ---------------------------------
for name in sorted(os.listdir(os.path.join(SRC, "python-multipart"))):
    if not name.endswith(".yaml"):
        continue
    stem = name[:-5]
    body = copy(f"python-multipart/{stem}.http")
    copy(f"python-multipart/{name}")
    y = yaml.safe_load(open(os.path.join(SRC, "python-multipart", name)))
    case_id = f"python-multipart/{stem}"
    exp = y["expected"]
    if isinstance(exp, dict) and "error" in exp:
        add(case_id, body, "invalid", "refuse", boundary=y["boundary"])
        continue
    if stem == "single_field_blocks":
        add(case_id, body, "valid", "refuse", boundary=y["boundary"], error="foreignDelimiter",
            why="the declared boundary is '--boundary' but the body is delimited by '--boundary' lines, i.e. boundary 'boundary'; RFC 2046 finds no delimiter")
        continue
    raw = read(body)
    parts = []
    for i, p in enumerate(exp):
        data = p["data"]
        # The oracle gives decoded data: compare after undoing the part's own
        # Content-Transfer-Encoding, which FormGate forwards as sent.
        decode = "transfer-encoding"
        parts.append(part(case_id, i, p["name"], data,
                          p.get("file_name") if p.get("type") == "file" else None,
                          p.get("content_type") if p.get("type") == "file" else None, decode))
    add(case_id, body, "valid", "accept", boundary=y["boundary"], parts=parts)

# --- dicer ----------------------------------------------------------------------------------
dc = json.load(open(os.path.join(SRC, "dicer/expectations.json")))
copy("dicer/expectations.json")
for c in dc["cases"]:
    folder = "dicer/" + c["source"]
    for f in sorted(os.listdir(os.path.join(SRC, folder))):
        copy(f"{folder}/{f}")
    case_id = folder
    body = f"{folder}/original"
    if c.get("dicer_error"):
        add(case_id, body, "invalid", "refuse", boundary=c["boundary"])
        continue
    parts = []
    for n in range(1, c["nparts"] + 1):
        hdr = json.load(open(os.path.join(SRC, folder, f"part{n}.header")))
        cd = hdr["content-disposition"][0]
        name = re.search(r'name="([^"]*)"', cd).group(1)
        fn = re.search(r'filename="([^"]*)"', cd)
        ct = hdr.get("content-type", [None])[0]
        parts.append(part(case_id, n - 1, name, read(f"{folder}/part{n}"), fn.group(1) if fn else None,
                          ct if fn else None))
    anomalies = None
    if c["source"] in ("nested", "nested-full"):
        # Part 2 declares 'Content-Type: multipart/mixed, boundary=BbC04y' (RFC 1867 §6's own
        # example, a comma where ';' belongs): not a media type, so it is forwarded as
        # application/octet-stream and flagged; the nested body stays the part's content.
        anomalies = ["invalid_part_content_type"] + (["data_before"] if c.get("header_first") else [])
    add(case_id, body, "valid", "accept", boundary=c["boundary"], parts=parts, anomalies=anomalies)

# --- busboy ---------------------------------------------------------------------------------
BB_POLICY = {
    "03": ("refuse", "unexpectedEnd", None),
    "19": ("refuse", "headerFolding", "the second part's Content-Type is folded onto a continuation line: DESIGN.md refuses folding"),
    "04": ("refuse", "limitExceeded", "busboy truncates over-limit values; FormGate refuses the request (413)"),
    "05": ("refuse", "limitExceeded", "busboy skips files over the count; FormGate refuses (413)"),
    "09": ("refuse", "invalidContentDisposition", "the second part has an empty Content-Disposition; busboy skips the part silently, FormGate refuses a part it cannot name"),
    "11": ("refuse", "invalidHeaderName", None),
    "14": ("refuse", "unexpectedEnd", None),
    "15": ("refuse", "unexpectedEnd", None),
    "17": ("refuse", "headerFolding", "obs-fold in a part header: DESIGN.md refuses folding"),
    "18": ("refuse", "missingContentDisposition", "busboy ignores the part; FormGate refuses a part without Content-Disposition"),
    "20": ("refuse", "limitExceeded", "busboy stops at the limit; FormGate refuses (413)"),
    "21": ("refuse", "limitExceeded", "busboy stops at the limit; FormGate refuses (413)"),
    "22": ("refuse", "limitExceeded", "busboy stops at the limit; FormGate refuses (413)"),
    "23": ("refuse", "limitExceeded", None),
}
for name in sorted(os.listdir(os.path.join(SRC, "busboy"))):
    if not name.endswith(".json"):
        continue
    num = name[:2]
    d = json.load(open(os.path.join(SRC, "busboy", name)))
    copy(f"busboy/{name}")
    body = copy(f"busboy/{d['body_file']}")
    case_id = f"busboy/{name[:-5]}"
    limits = {}
    for k, v in (d.get("limits") or {}).items():
        if v is None:
            continue
        limits[{"fileSize": "fileBytes", "fieldSize": "fieldBytes", "files": "files",
                "fields": "fields", "parts": "parts"}[k]] = v
    if num == "23":
        limits["partHeaderBytes"] = 16 * 1024 + 4  # busboy's header limit
    if num == "25":
        limits["partHeaderBytes"] = 16 * 1024 + 4
    source_invalid = any(isinstance(e, str) or "error" in e or e.get("err") for e in d["expected"])
    if num in BB_POLICY:
        verdict, error, why = BB_POLICY[num]
        add(case_id, body, "invalid" if source_invalid else "valid", verdict, boundary=d["boundary"],
            error=error, limits=limits, why=why)
        continue
    assert not source_invalid, name
    parts = []
    for i, e in enumerate(d["expected"]):
        if e["type"] == "field":
            parts.append(part(case_id, i, e["name"], e["val"].encode()))
        else:
            fn = e["info"]["filename"]
            parts.append(part(case_id, i, e["name"], base64.b64decode(e["data"]["base64"]), fn,
                              e["info"]["mimeType"]))
    why = None
    if num == "06":
        why = "busboy's test ignores the file parts; FormGate reads them too, so only the fields are pinned"
        parts = None
    if num in ("07", "08"):
        why = "busboy reduces paths to basenames unless preservePath; the parser keeps the client's filename as sent (sanitizing is a rule)"
        raw = read(body)
        fns = [m.decode() for m in re.findall(rb'filename="([^"]*)"', raw)]
        for p, fn in zip(parts, fns):
            p["filename"] = fn
    if num == "16":
        why = "the part's Content-Type is checked as a media type, parameters included"
    add(case_id, body, "valid", "accept", boundary=d["boundary"], parts=parts, limits=limits, why=why)

# --- formidable: whole HTTP requests --------------------------------------------------------
fm = json.load(open(os.path.join(SRC, "formidable/expectations.json")))
copy("formidable/expectations.json")
for f in os.listdir(os.path.join(SRC, "formidable/file")):
    copy(f"formidable/file/{f}")
# The value is unquoted, so it must be a token (RFC 9110 5.6.6, RFC 2045 5.1); neither '\' nor
# '/' is one, so the Content-Type is refused as a malformed parameter before there is a boundary
# to judge. Quoted, '\/' would be a quoted-pair and the boundary '///...', which the body's
# '--\/\/...' lines do not match either.
BACKSLASH_BOUNDARY = ("refuse", "invalidParameter", "the unquoted boundary is made of '\\/' pairs, which are not token characters, so the Content-Type parameter is malformed (quoted, '\\/' would read as an escaped '/')")
FM_POLICY = {
    "encoding/blank.gif.http": BACKSLASH_BOUNDARY,
    "encoding/beta-sticker-1.png.http": BACKSLASH_BOUNDARY,
    "encoding/binaryfile.tar.gz.http": BACKSLASH_BOUNDARY,
    "encoding/menu_separator.png.http": BACKSLASH_BOUNDARY,
    "misc/empty-multipart.http": ("refuse", "unexpectedEnd", "an empty body has no closing delimiter (RFC 2046 requires one)"),
    "workarounds/missing-hyphens1.http": ("refuse", "unexpectedEnd", "the closing delimiter lacks '--': the body may be truncated, so it is refused"),
    "workarounds/missing-hyphens2.http": ("refuse", "unexpectedEnd", "the closing delimiter lacks '--': the body may be truncated, so it is refused"),
    "special-chars-in-filename/osx-firefox-3.6.http": ("refuse", "invalidContentDisposition", "Firefox 3.6 sends a raw '\"' inside the quoted filename; what follows the early closing quote could be read two ways"),
    "special-chars-in-filename/xp-ie-7.http": ("refuse", "invalidContentDisposition", "IE7 sends a raw '\"' inside the quoted filename"),
    "special-chars-in-filename/xp-ie-8.http": ("refuse", "invalidContentDisposition", "IE8 sends a raw '\"' inside the quoted filename"),
}
NOT_MULTIPART = {"misc/empty.http", "misc/minimal.http", "misc/empty-urlencoded.http"}


def split_http(raw):
    for sep in (b"\r\n\r\n", b"\n\n"):
        i = raw.find(sep)
        if i >= 0:
            return raw[:i], raw[i + len(sep):]
    return raw, b""


def raw_parts(body, boundary):
    """A naive split used only to recover bytes that the oracle's sha1 then confirms."""
    out = []
    for chunk in body.split(b"--" + boundary)[1:]:
        if chunk.startswith(b"--"):
            break
        head, _, content = chunk.partition(b"\r\n\r\n")
        if not _:
            head, _, content = chunk.partition(b"\n\n")
        content = content[:-2] if content.endswith(b"\r\n") else content[:-1] if content.endswith(b"\n") else content
        out.append((head, content))
    return out


for root, _, files in os.walk(os.path.join(SRC, "formidable/http")):
    for fname in sorted(files):
        rel = os.path.relpath(os.path.join(root, fname), os.path.join(SRC, "formidable/http"))
        src_rel = f"formidable/http/{rel}"
        if not fname.endswith(".http"):
            copy(src_rel)
            continue
        if rel in NOT_MULTIPART:
            continue
        body = copy(src_rel)
        case_id = f"formidable/{rel[:-5]}"
        exp = fm["cases"].get(rel)
        if isinstance(exp, dict):
            exp_parts = exp.get("parts")
        else:
            exp_parts = exp
        if rel in FM_POLICY:
            verdict, error, why = FM_POLICY[rel]
            add(case_id, body, "valid", verdict, http=True, error=error, why=why)
            continue
        raw = read(src_rel)
        head, content = split_http(raw)
        boundary = re.search(rb"boundary=([^\r\n;]+)", head).group(1)
        split = raw_parts(content, boundary)
        parts = []
        if exp_parts is None:  # the WebKit variants: same as osx-chrome-13 in upstream's table
            exp_parts = fm["cases"]["special-chars-in-filename/osx-chrome-13.http"]
        for i, e in enumerate(exp_parts):
            h, data = split[i]
            decode = "transfer-encoding"
            if "sha1" in e:
                check = base64.b64decode(data) if b"transfer-encoding: base64" in h.lower() else data
                assert hashlib.sha1(check).hexdigest() == e["sha1"], (rel, i)
                data = check
            elif e["type"] == "field":
                data = None
            fn = None
            if e["type"] == "file":
                m = re.search(rb'filename="([^"]*)"', h)
                fn = m.group(1).decode("utf-8") if m else ""
            parts.append(part(case_id, i, e["name"], data if "sha1" in e else None, fn, None, decode))
        why = None
        if rel.startswith("special-chars"):
            why = "formidable reduces the name to a basename and decodes %22; the parser reports the filename as sent"
        anomalies = ["lf_line_endings"] if "line-separator" in rel else None
        add(case_id, body, "valid", "accept", http=True, parts=parts, why=why, anomalies=anomalies)

copy("formidable/multi_video.upload")
mv = fm["cases"]["multi_video.upload"]
raw = read("formidable/multi_video.upload")
bnd = b"---------------------------10102754414578508781458777923"
split = raw_parts(raw, bnd)
sha1s = re.findall(r"[0-9a-f]{40}", mv["note"])
mv_parts = [part("formidable/multi_video", 0, "title", b"")]
for i, (h, data) in enumerate(split[1:], start=1):
    assert hashlib.sha1(data).hexdigest() == sha1s[i - 1]
    fn = re.search(rb'filename="([^"]*)"', h).group(1).decode()
    mv_parts.append(part("formidable/multi_video", i, "upload", data, fn))
add("formidable/multi_video", "formidable/multi_video.upload", "valid", "accept", boundary=bnd.decode(),
    parts=mv_parts)

# --- go mime/multipart ----------------------------------------------------------------------
body = copy("go-mime-multipart/nested-mime")
add("go-mime-multipart/nested-mime", body, "valid", "refuse", boundary="e89a8ff1c1e83553e304be640612",
    error="missingContentDisposition",
    why="an email-style multipart/mixed body: its parts carry no Content-Disposition and one header is folded")

copy("README.md")
with open(os.path.join(ROOT, "manifest.json"), "w") as f:
    json.dump({"_meta": {"generated_by": "scripts/import-corpus.py",
                         "meaning": "One entry per corpus body: the verdict FormGate's parser must reach, the parts it must report (content files hold the exact bytes; decode names a transfer encoding to undo before comparing), and, where FormGate's policy differs from the source's, why."},
               "cases": cases}, f, indent=1, ensure_ascii=False)
print(len(cases), "cases")
