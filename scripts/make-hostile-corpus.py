#!/usr/bin/env python3
"""Writes Tests/Fixtures/hostile/: hostile requests as raw files, with manifest.json giving
each one's family, the status FormGate must answer, and what the upstream may see:
  "nothing"    - no bytes at all,
  "incomplete" - never a complete request (no closing delimiter of the forwarded boundary,
                 a Content-Length body short of its length),
  "sanitized"  - a complete request whose parts are exactly `parts`: each one's name, file
                 name (null for a field), size and sha256 of its content, and a field's value,
  "passthrough"- the body as sent (`body`: size and sha256).
`reason` says why a case is refused or sanitized the way it is, where that is a decision.
Run by a developer (`python3 scripts/make-hostile-corpus.py`); tests read the files."""
import hashlib, json, os

OUT = os.path.join(os.path.dirname(__file__), "..", "Tests", "Fixtures", "hostile")
cases = []


class Built(bytes):
    """Bytes that remember the parts they were built from (`parts`: the `Part`s, in order)."""
    parts = None


class Part(bytes):
    """One part's bytes, with the name, file name and content it was built from."""
    name = filename = content = None


def unquoted(value):
    return value[1:-1] if value is not None and len(value) >= 2 and value[:1] == value[-1:] == b'"' else value


def request(body, boundary="b0undary", path="/upload", extra="", content_type=None):
    ct = content_type if content_type is not None else f"multipart/form-data; boundary={boundary}"
    head = f"POST {path} HTTP/1.1\r\nHost: test\r\nContent-Type: {ct}\r\nContent-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n"
    out = Built(head.encode() + body)
    out.parts = getattr(body, "parts", None)
    return out

def part(name=b'"f"', filename=None, content=b"data", headers=b""):
    cd = b'Content-Disposition: form-data; name=' + name
    if filename is not None:
        cd += b'; filename=' + filename
    out = Part(cd + b"\r\n" + headers + b"\r\n" + content)
    out.name, out.filename, out.content = unquoted(name), unquoted(filename), content
    return out

def body(*parts, boundary=b"b0undary", preamble=b"", epilogue=b""):
    out = preamble
    for i, p in enumerate(parts):
        out += (b"" if i == 0 and not preamble else b"\r\n") + b"--" + boundary + b"\r\n" + p
    out = Built(out + b"\r\n--" + boundary + b"--\r\n" + epilogue)
    out.parts = [p for p in parts if isinstance(p, Part)] if all(isinstance(p, Part) for p in parts) else None
    return out

def expected_part(name, filename, content):
    """What the upstream must receive of one part (the demo upstream reports a field's value
    up to 64 KiB, decoded as UTF-8)."""
    out = {"name": name, "filename": filename, "size": len(content),
           "sha256": hashlib.sha256(content).hexdigest()}
    if filename is None and len(content) <= 65536:
        try:
            out["value"] = content.decode("utf-8")
        except UnicodeDecodeError:
            pass  # size and sha256 only (the demo upstream reports values as UTF-8)
    return out

def add(family, name, raw, status, upstream, parts=None, contents=None, reason=None):
    """Adds a case. For "sanitized", `parts` lists (name, filename) as the upstream must see
    them (default: as built) and `contents` each part's bytes (default: as built with part())."""
    case = {"family": family, "name": name, "file": f"{len(cases):03d}-{name}.http",
            "status": status, "upstream": upstream}
    if upstream == "sanitized":
        built = getattr(raw, "parts", None)
        if parts is None and built is not None:
            parts = [[p.name.decode(), None if p.filename is None else p.filename.decode()] for p in built]
        if contents is None and built is not None:
            contents = [p.content for p in built]
        if parts is None or contents is None or len(parts) != len(contents):
            raise SystemExit(f"{family}/{name}: a sanitized case needs its parts and their contents")
        case["parts"] = [expected_part(n, f, c) for (n, f), c in zip(parts, contents)]
    elif upstream == "passthrough":
        sent = raw[raw.index(b"\r\n\r\n") + 4:]
        case["body"] = {"size": len(sent), "sha256": hashlib.sha256(sent).hexdigest()}
    elif parts is not None:
        raise SystemExit(f"{family}/{name}: only a sanitized case has parts")
    if reason is not None:
        case["reason"] = reason
    cases.append(case)
    with open(os.path.join(OUT, case["file"]), "wb") as f:
        f.write(raw)

os.makedirs(OUT, exist_ok=True)
for f in os.listdir(OUT):
    os.remove(os.path.join(OUT, f))

# --- multipart floods ------------------------------------------------------------------------
many = [part(name=f'"f{i}"'.encode(), content=b"x") for i in range(1001)]
# Refusals found after the first read: the upstream may have seen a prefix, never a whole request.
add("flood", "parts-over-limit", request(body(*many)), 413, "incomplete")
add("flood", "parts-at-limit", request(body(*many[:1000])), 200, "sanitized", None)
hdrs = b"".join(b"X-H%d: v\r\n" % i for i in range(40))
add("flood", "headers-per-part", request(body(part(headers=hdrs))), 400, "nothing")
add("flood", "part-header-bytes", request(body(part(headers=b"X-Big: " + b"a" * 9000 + b"\r\n"))), 400, "incomplete")
EDGES = "sanitized: RFC 2046 5.1.1 says preamble and epilogue are to be ignored, whatever their size; FormGate drops them (the upstream's parser must flag neither), only the body limit bounds them"
add("flood", "crlf-preamble", request(body(part(), preamble=b"\r\n" * 5000)), 200, "sanitized", [["f", None]], reason=EDGES)
add("flood", "crlf-epilogue", request(body(part(), epilogue=b"\r\n" * 5000)), 200, "sanitized", [["f", None]], reason=EDGES)
add("flood", "cr-megabytes-in-part", request(body(part(filename=b'"a.bin"', content=b"\r" * (2 << 20)))), 200, "sanitized", [["f", "a.bin"]])
add("flood", "lf-megabytes-in-part", request(body(part(filename=b'"a.bin"', content=b"\n" * (1 << 20)))), 200, "sanitized", [["f", "a.bin"]])
add("flood", "dash-megabytes-in-part", request(body(part(filename=b'"a.bin"', content=b"-" * (1 << 20)))), 200, "sanitized", [["f", "a.bin"]])
add("flood", "crlfdash-dense", request(body(part(filename=b'"a.bin"', content=b"\r\n--" * 100000))), 200, "sanitized", [["f", "a.bin"]])
add("flood", "field-over-limit", request(body(part(content=b"v" * ((1 << 20) + 1)))), 413, "incomplete")
add("flood", "empty-parts", request(body(*[part(name=f'"e{i}"'.encode(), content=b"") for i in range(300)])), 200, "sanitized", None)
add("flood", "preamble-text-1mib", request(body(part(), preamble=b"P" * (1 << 20) + b"\r\n")), 200, "sanitized", [["f", None]], reason=EDGES)
add("flood", "no-closing-delimiter", request(b"--b0undary\r\n" + part() + b"\r\n"), 400, "incomplete")
add("flood", "only-preamble", request(b"just text, no delimiter\r\n"), 400, "nothing")
add("flood", "empty-body", request(b""), 400, "nothing")

# --- boundary abuse --------------------------------------------------------------------------
B = body(part())
add("boundary", "empty", request(B, content_type="multipart/form-data; boundary="), 400, "nothing")
add("boundary", "empty-quoted", request(B, content_type='multipart/form-data; boundary=""'), 400, "nothing")
add("boundary", "missing", request(B, content_type="multipart/form-data"), 400, "nothing")
long = "b" * 71
add("boundary", "71-chars", request(body(part(), boundary=long.encode()), boundary=long), 400, "nothing")
ok70 = "b" * 70
add("boundary", "70-chars", request(body(part(), boundary=ok70.encode()), boundary=ok70), 200, "sanitized", [["f", None]])
for i, ch in enumerate(["@", "\\\\", "[", "]", "{", "}", "<", ">", ";x", "é"]):
    add("boundary", f"illegal-char-{i}", request(B, content_type=f'multipart/form-data; boundary="b0und{ch}ary"'), 400, "nothing")
add("boundary", "trailing-space", request(B, content_type='multipart/form-data; boundary="b0undary "'), 400, "nothing")
add("boundary", "quoted", request(B, content_type='multipart/form-data; boundary="b0undary"'), 200, "sanitized", [["f", None]])
add("boundary", "partly-quoted", request(B, content_type='multipart/form-data; boundary="b0un"dary'), 400, "nothing")
add("boundary", "space-before-equals", request(B, content_type="multipart/form-data; boundary =b0undary"), 400, "nothing")
add("boundary", "space-after-equals", request(B, content_type="multipart/form-data; boundary= b0undary"), 400, "nothing")
add("boundary", "duplicate", request(B, content_type="multipart/form-data; boundary=b0undary; boundary=other"), 400, "nothing")
add("boundary", "duplicate-case", request(B, content_type="multipart/form-data; BOUNDARY=b0undary; boundary=b0undary"), 400, "nothing")
add("boundary", "two-content-types", request(B, extra="Content-Type: multipart/form-data; boundary=other\r\n"), 400, "nothing")
# RFC 1867 §6 and iOS tutorials write a comma before boundary: read, flagged comma_separated_parameters.
add("boundary", "comma-list", request(B, content_type="multipart/form-data, boundary=b0undary"), 200, "sanitized", [["f", None]])
add("boundary", "wrong-boundary", request(B, boundary="other"), 400, "nothing")
add("boundary", "prefix-boundary", request(body(part(), boundary=b"b0undaryX"), boundary="b0undary"), 400, "nothing")
for i, look in enumerate([b"\r\n--b0undaryX", b"\r\n--b0undary-X", b"\r\n--b0undar", b"--b0undary--", b"\r\n--b0undary\rX", b"\n--b0undaryZ"]):
    add("boundary", f"lookalike-in-data-{i}", request(body(part(filename=b'"a.bin"', content=b"x" + look + b"Z"))), 200, "sanitized", [["f", "a.bin"]])
add("boundary", "transport-padding", request(b"--b0undary \t \r\n" + part() + b"\r\n--b0undary-- \r\n"), 200, "sanitized", [["f", None]], [b"data"])
add("boundary", "junk-after-delimiter", request(b"--b0undary junk\r\n" + part() + b"\r\n--b0undary--\r\n"), 400, "nothing")
add("boundary", "bare-lf-delimiter-in-crlf-body", request(b"--b0undary\r\n" + part() + b"\n--b0undary\r\n" + part(name=b'"g"') + b"\r\n--b0undary--\r\n"), 200, "sanitized", [["f", None]],
    [b"data\n--b0undary\r\n" + part(name=b'"g"')])  # RFC 2046: content, flagged bare_lf_delimiter
add("boundary", "lf-only-body", request(b"--b0undary\n" + part().replace(b"\r\n", b"\n") + b"\n--b0undary--\n"), 200, "sanitized", [["f", None]], [b"data"])
add("boundary", "foreign-delimiter-in-preamble", request(b"--other\r\n" + body(part())), 400, "nothing")
add("boundary", "not-multipart-on-rewriting-route", request(b"a=b", content_type="application/x-www-form-urlencoded"), 200, "passthrough")

SQUOTE = "sanitized: a single quote is a token character (RFC 9110 5.6.2), not a quote, so the value is the literal text with its quotes; it goes upstream double-quoted, so a parser that reads single quotes as quotes (PHP) reads the same value"
# --- part headers -----------------------------------------------------------------------------
def hcase(name, headers_block, status, upstream="nothing", parts=None, reason=None):
    raw = b"--b0undary\r\n" + headers_block + b"\r\n\r\ndata\r\n--b0undary--\r\n"
    add("part-header", name, request(raw), status, upstream, parts, [b"data"] if parts else None, reason=reason)
CD = b'Content-Disposition: form-data; name="f"'
hcase("leading-space", b" " + CD, 400)
hcase("leading-tab", b"\t" + CD, 400)
hcase("folded", CD + b';\r\n filename="a.txt"', 400)
hcase("duplicate-cd", CD + b"\r\n" + CD, 400)
hcase("duplicate-name", b'Content-Disposition: form-data; name="f"; name="g"', 400)
hcase("duplicate-name-case", b'Content-Disposition: form-data; name="f"; NAME="g"', 400)
hcase("duplicate-filename", b'Content-Disposition: form-data; name="f"; filename="a"; filename="b"', 400)
hcase("filename-star-differs", b"Content-Disposition: form-data; name=\"f\"; filename=\"a.jpg\"; filename*=UTF-8''a.php", 400)
hcase("filename-star-same", b"Content-Disposition: form-data; name=\"f\"; filename=\"a.jpg\"; filename*=UTF-8''a.jpg", 200, "sanitized", [["f", "a.jpg"]])
hcase("filename-star-only", b"Content-Disposition: form-data; name=\"f\"; filename*=UTF-8''n%C3%A4me.txt", 200, "sanitized", [["f", "n\u00e4me.txt"]])
hcase("filename-star-bad-charset", b"Content-Disposition: form-data; name=\"f\"; filename*=koi8-r''x", 400)
hcase("filename-star-bad-escape", b"Content-Disposition: form-data; name=\"f\"; filename*=UTF-8''%zz", 400)
hcase("decoy-filename-in-name", b'Content-Disposition: form-data; name="f; filename=evil.php"', 200, "sanitized", [["f; filename=evil.php", None]])
# The escaped quotes stay in the name, which the upstream gets percent-encoded as browsers do.
hcase("decoy-filename-escaped-quote", b'Content-Disposition: form-data; name="f\\"; filename=\\"evil.php"', 200, "sanitized", [['f%22; filename=%22evil.php', None]])
hcase("junk-after-quoted", b'Content-Disposition: form-data; name="f"junk; filename="a"', 400)
hcase("junk-after-quoted-space", b'Content-Disposition: form-data; name="f" junk', 400)
hcase("raw-quote-in-filename", b'Content-Disposition: form-data; name="f"; filename="a"b.txt"', 400)
hcase("unterminated-quote", b'Content-Disposition: form-data; name="f', 400)
hcase("single-quotes", b"Content-Disposition: form-data; name='f'", 200, "sanitized", [["'f'", None]], reason=SQUOTE)
hcase("single-quotes-with-space", b"Content-Disposition: form-data; name='f g'", 200, "sanitized", [["'f g'", None]], reason=SQUOTE)
hcase("nul-in-name", b'Content-Disposition: form-data; name="f\x00"', 400)
hcase("nul-in-header", CD + b"\r\nX-A: 1\x002", 400)
hcase("cr-in-header", CD + b"\r\nX-A: 1\r2", 400)
hcase("lf-in-header", CD + b"\r\nX-A: 1\n2", 400)
hcase("esc-in-header", CD + b"\r\nX-A: \x1b[31m", 400)
hcase("no-cd", b"Content-Type: text/plain", 400)
hcase("empty-cd", b"Content-Disposition: ", 400)
hcase("no-name", b'Content-Disposition: form-data; filename="a"', 400)
hcase("attachment", b'Content-Disposition: attachment; name="f"', 400)
hcase("space-before-colon", b'Content-Disposition : form-data; name="f"', 400)
hcase("empty-header-name", b": x\r\n" + CD, 400)
hcase("header-no-colon", CD + b"\r\nGarbage", 400)
hcase("bad-header-char", CD + b"\r\nX(A): 1", 400)
hcase("bad-content-type", CD + b"\r\nContent-Type: image", 200, "sanitized", [["f", None]])  # sent as application/octet-stream
hcase("duplicate-content-type", CD + b"\r\nContent-Type: image/png\r\nContent-Type: text/html", 400)
hcase("inline-and-header-content-type", b'Content-Disposition: form-data; name="f"; Content-Type: image/png\r\nContent-Type: text/html', 400)
hcase("inline-content-type", b'Content-Disposition: form-data; name="f"; filename="a.png"; Content-Type: image/png', 200, "sanitized", [["f", "a.png"]])
hcase("unquoted-values", b"Content-Disposition: form-data; name=f; filename=a b.txt", 200, "sanitized", [["f", "a b.txt"]])
hcase("header-without-space", b'Content-Disposition:form-data; name="f"', 200, "sanitized", [["f", None]])
hcase("mixed-case-header", b'cOnTeNt-DiSpOsItIoN: FoRm-DaTa; NaMe="f"', 200, "sanitized", [["f", None]])
hcase("other-parameter", b'Content-Disposition: form-data; name="f"; size=3', 200, "sanitized", [["f", None]])
hcase("bare-token-junk", b'Content-Disposition: form-data; name="f"; junk', 200, "sanitized", [["f", None]])
hcase("cte-base64", CD + b"\r\nContent-Transfer-Encoding: base64", 200, "sanitized", [["f", None]])
hcase("utf8-name", 'Content-Disposition: form-data; name="фото"'.encode(), 200, "sanitized", [["фото", None]])

# --- filenames --------------------------------------------------------------------------------
def fcase(name, filename, status, expected=None, reason=None):
    raw = body(part(name=b'"f"', filename=filename, content=b"FILE"))
    add("filename", name, request(raw), status, "sanitized" if status == 200 else "nothing",
        [["f", expected]] if status == 200 else None, reason=reason)
fcase("traversal-slash", b'"../../etc/passwd"', 200, "passwd")
fcase("traversal-backslash", b'"..\\\\..\\\\windows\\\\win.ini"', 200, "win.ini")
fcase("traversal-mixed", b'"a/b\\\\c/../d.txt"', 200, "d.txt")
fcase("absolute-unix", b'"/etc/shadow"', 200, "shadow")
fcase("absolute-windows", b'"C:\\\\Windows\\\\System32\\\\cmd.exe"', 200, "cmd.exe")
fcase("ie-raw-backslashes", b'"C:\\Users\\me\\photo.jpg"', 200, "photo.jpg")
fcase("unc-path", b'"\\\\\\\\server\\\\share\\\\x.doc"', 200, "x.doc")
for dev in ["CON", "PRN", "AUX", "NUL", "COM1", "LPT9", "con.txt", "nul.tar.gz", "CON "]:
    fcase(f"device-{dev.replace(' ', '_').replace('.', '_')}", f'"{dev}"'.encode(), 400)
fcase("dot", b'"."', 400)
fcase("dotdot", b'".."', 400)
fcase("dotdot-after-slash", b'"a/.."', 400)
NTFS = "sanitized: NTFS reads NAME:STREAM as a stream of NAME (IIS stores a.asp for 'a.asp:.jpg', a.php for 'a.php::$DATA'), so the extension a check sees is not the one stored; ':' becomes '_'"
fcase("ntfs-stream", b'"file.txt::$DATA"', 200, "file.txt__$DATA", reason=NTFS)
fcase("ntfs-stream-colon", b'"a.asp:.jpg"', 200, "a.asp_.jpg", reason=NTFS)
DOTS = "sanitized: Windows drops trailing dots and spaces when it stores a name ('evil.php...' is stored as evil.php); trimming them shows the upstream's checks the extension that will be stored"
fcase("trailing-dots", b'"evil.php..."', 200, "evil.php", reason=DOTS)
fcase("trailing-spaces-dots", b'"evil.php . ."', 200, "evil.php", reason=DOTS)
fcase("nul-in-filename", b'"a.php\x00.jpg"', 400)
fcase("cr-lf-injection", b'"a.txt\r\nX-Injected: 1"', 400)
fcase("percent-encoded-crlf", b'"a%0D%0AX: 1.txt"', 200, "a%0D%0AX_ 1.txt", reason=NTFS)
UTF8 = "sanitized: bytes that are not UTF-8 would decode differently in each upstream (Latin-1, replacement characters, errors); they are removed, the valid rest is kept"
fcase("invalid-utf8", b'"\xff\xfe.txt"', 200, ".txt", reason=UTF8)
BIDI = "sanitized: bidi controls make the displayed name differ from the stored one ('invoice<RLO>gnp.exe' shows as invoiceexe.png); they are removed"
fcase("bidi-override", '"invoice\u202Egnp.exe"'.encode(), 200, "invoicegnp.exe", reason=BIDI)
fcase("bidi-isolate", '"a\u2066b\u2069.txt"'.encode(), 200, "ab.txt", reason=BIDI)
fcase("zero-width-mark", '"a\u200Fb.txt"'.encode(), 200, "ab.txt")
fcase("c1-control", '"a\u0085b.txt"'.encode(), 200, "ab.txt")
fcase("del-char", b'"a\x7fb.txt"', 400)
fcase("tab", b'"a\tb.txt"', 200, "ab.txt")
LONG = "sanitized: file systems cap a name at 255 bytes (ext4, XFS) or 255 UTF-16 units (NTFS) and refuse longer ones; the name is cut to 255 UTF-8 bytes on a character boundary, keeping the extension"
fcase("long-ascii-300", b'"' + b"a" * 300 + b'.png"', 200, "a" * 251 + ".png", reason=LONG)
fcase("empty", b'""', 200, "")
fcase("unicode-snowman", '"\u2603.txt"'.encode(), 200, "\u2603.txt")
fcase("percent-22", b'"a%22b.txt"', 200, "a%22b.txt")
fcase("html", b'"<script>alert(1)</script>.png"', 200, "script>.png")
fcase("semicolon", b'"a;b=c.txt"', 200, "a;b=c.txt")
fcase("only-slashes", b'"////"', 200, "")
# a 64 KiB name goes over the part header limit
add("filename", "name-64kib", request(body(part(filename=b'"' + b"n" * 65536 + b'.txt"'))), 400, "incomplete")

# --- HTTP framing and smuggling ---------------------------------------------------------------
def raw(name, text, status):
    add("framing", name, text.encode() if isinstance(text, str) else text, status, "nothing")
raw("cl-te", "POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400)
raw("te-cl", "POST /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 4\r\n\r\n0\r\n\r\n", 400)
raw("cl-cl-differ", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400)
raw("cl-cl-same", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab", 400)
raw("cl-list", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 2, 2\r\n\r\nab", 400)
raw("cl-plus", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +2\r\n\r\nab", 400)
raw("cl-space-inside", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1 2\r\n\r\nab", 400)
raw("cl-hex", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 0x2\r\n\r\nab", 400)
raw("cl-huge", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 18446744073709551617\r\n\r\n", 400)
raw("cl-over-body-limit", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 5000000000\r\n\r\n", 413)
for i, te in enumerate(["chunked, identity", "identity, chunked", "gzip, chunked", "chunked, chunked", "xchunked", "chunked;x=1", " chunked ,", "\"chunked\"", "chunke", "CHUNKED, gzip"]):
    raw(f"te-obfuscated-{i}", f"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: {te}\r\n\r\n0\r\n\r\n", 400)
raw("te-twice", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400)
raw("te-space-before-colon", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n", 400)
raw("te-folded", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding:\r\n chunked\r\n\r\n0\r\n\r\n", 400)
raw("te-http10", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400)
raw("te-vertical-tab", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: \x0bchunked\r\n\r\n0\r\n\r\n", 400)
for i, chunk in enumerate(["zz\r\nab\r\n0\r\n\r\n", "2\nab\r\n0\r\n\r\n", "2\r\nabc\r\n0\r\n\r\n", "-2\r\nab\r\n0\r\n\r\n", "2 \r\nab\r\n0\r\n\r\n", "ffffffffffffffffff\r\n", "2;a\nb\r\nab\r\n0\r\n\r\n", "2;\x00\r\nab\r\n0\r\n\r\n", "2\r\nab\n0\r\n\r\n", "0\r\nX-Trailer\r\n\r\n", "0\r\n Folded: x\r\n\r\n", "0\r\nContent-Length: 5\r\n\n"]):
    raw(f"chunk-bad-{i}", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n" + chunk, 400)
raw("obs-fold", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n 2\r\n\r\n", 400)
raw("bare-cr", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r2\r\n\r\n", 400)
raw("nul-in-field", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\x002\r\n\r\n", 400)
raw("request-line-double-space", "GET  / HTTP/1.1\r\nHost: a\r\n\r\n", 400)
raw("request-line-tab", "GET\t/ HTTP/1.1\r\nHost: a\r\n\r\n", 400)
raw("request-line-no-version", "GET /\r\nHost: a\r\n\r\n", 400)
raw("request-line-lowercase-version", "GET / http/1.1\r\nHost: a\r\n\r\n", 400)
raw("request-line-http2", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505)
raw("request-line-http3", "GET / HTTP/3.0\r\nHost: a\r\n\r\n", 505)
raw("request-line-space-in-target", "GET /a b HTTP/1.1\r\nHost: a\r\n\r\n", 400)
raw("request-line-bad-method", "G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400)
raw("request-line-connect", "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", 400)
raw("request-line-asterisk-get", "GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400)
raw("request-line-utf8-target", "GET /\u00e9 HTTP/1.1\r\nHost: a\r\n\r\n", 400)
raw("host-missing", "GET / HTTP/1.1\r\n\r\n", 400)
raw("host-twice", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400)
raw("host-userinfo", "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", 400)
raw("host-space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400)
raw("host-empty", "GET / HTTP/1.1\r\nHost:\r\n\r\n", 400)
raw("absolute-uri-userinfo", "GET http://u@a/ HTTP/1.1\r\nHost: a\r\n\r\n", 400)
raw("header-too-large", "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + "a" * 40000 + "\r\n\r\n", 431)
raw("too-many-headers", "GET / HTTP/1.1\r\nHost: a\r\n" + "".join(f"X-{i}: v\r\n" for i in range(200)) + "\r\n", 400)
raw("header-name-space", "GET / HTTP/1.1\r\nHost: a\r\nX A: 1\r\n\r\n", 400)

# --- decisions (issue 12): more cases of the families above, kept after them so the files
# before keep their numbers.
add("flood", "epilogue-text-64kib", request(body(part(), epilogue=b"E" * 65536)), 200, "sanitized", [["f", None]], reason=EDGES)
fcase("ntfs-stream-php", b'"shell.php::$DATA"', 200, "shell.php__$DATA", reason=NTFS)
fcase("single-quoted-filename", b"'a.php'", 200, "'a.php'", reason=SQUOTE)
fcase("invalid-utf8-inside", b'"a\xc3(b\xed\xa0\x80.txt"', 200, "a(b.txt", reason=UTF8)
fcase("long-utf8-404-bytes", ('"' + "\u00e9" * 200 + '.png"').encode(), 200, "\u00e9" * 125 + ".png", reason=LONG)

# --- request targets and heads (issue 12, deliverable 10) ------------------------------------
# A body that FormGate must repair: passed through untouched, the upstream would see the
# unquoted parameters (anomalies) and the client's path in the filename.
BYPASS = body(part(name=b"f", filename=b"../../a.txt", content=b"BYPASS-CHECK")).replace(
    b"Content-Disposition: form-data", b"Content-Disposition:form-data")
def target(name, path, status, upstream="nothing", version="HTTP/1.1", extra=""):
    raw = request(BYPASS, extra=extra).replace(b"POST /upload HTTP/1.1", f"POST {path} {version}".encode(), 1)
    accepted = status == 200
    add("target", name, raw, status, upstream, [["f", "a.txt"]] if accepted else None,
        [b"BYPASS-CHECK"] if accepted else None)
# Spellings that Apache, nginx, PHP or a servlet container resolve to /upload: the route's
# rules apply (and the upstream gets the normalised target).
for name, path in [("dot-dot-segment", "/x/../upload"), ("double-slash", "//upload"), ("triple-slash", "///upload"),
                   ("dot-segment", "/./upload"), ("encoded-letter", "/%75pload"),
                   ("encoded-dot-dot", "/static/%2e%2e/upload"), ("mixed-encoded-dot-dot", "/static/.%2E/upload"),
                   ("encoded-dot", "/%2e/upload"), ("two-levels-up", "/a/b/../../upload"),
                   ("trailing-slash", "/upload/"), ("trailing-double-slash", "/upload//"),
                   ("path-parameter", "/upload;jsessionid=1"), ("absolute-form-dot-dot", "http://test/x/../upload")]:
    target(name, path, 200, "sanitized")
# Spellings that cannot be normalised safely: 400 before the upstream is connected.
for name, path in [("encoded-slash", "/static/..%2fupload"), ("encoded-slash-upper", "/static/..%2Fupload"),
                   ("encoded-backslash", "/static/..%5cupload"), ("backslash", "/static/..\\upload"),
                   ("above-root", "/../upload"), ("encoded-above-root", "/%2e%2e/upload"),
                   ("fragment", "/upload#frag"), ("fragment-in-query", "/upload?x#frag"),
                   ("tomcat-dot-dot-parameter", "/..;/upload"), ("tomcat-parameter-climb", "/static/..;/upload"),
                   ("percent-at-end", "/upload%"), ("percent-not-hex", "/up%zzload"), ("encoded-nul", "/upload%00"),
                   ("encoded-crlf", "/upload%0d%0aX-Injected:%201"), ("absolute-form-above-root", "http://test/../upload"),
                   ("quote-in-query", '/upload?a="b"')]:
    target(name, path, 400)
# HTTP/1.0 gets no 100 Continue (RFC 9110 §15.2), only the answer.
target("http10-expect-continue", "/upload", 200, "sanitized", version="HTTP/1.0", extra="Expect: 100-continue\r\n")

# Header names with "_" are dropped (CGI folds them into CONTENT_LENGTH, HTTP_X_FORWARDED_FOR).
for name, field in [("underscore-content-length", "Content_Length: 99999"),
                    ("underscore-transfer-encoding", "Transfer_Encoding: chunked"),
                    ("underscore-x-forwarded-for", "X_Forwarded_For: 10.0.0.1"), ("underscore-only", "_: x")]:
    add("header", name, request(body(part()), extra=field + "\r\n"), 200, "sanitized", [["f", None]])

# Chunk extensions (RFC 9112 §7.1.1): name a token, value a token or quoted string.
def chunked(size_line, payload):
    head = ("POST /upload HTTP/1.1\r\nHost: test\r\nContent-Type: multipart/form-data; boundary=b0undary\r\n"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n").encode()
    return head + size_line + b"\r\n" + payload + b"\r\n0\r\n\r\n"
ok = body(part())
add("chunk-ext", "valid-token-and-quoted", chunked(b"%x ; a=b ;c=\"d;e\"" % len(ok), ok), 200, "sanitized", [["f", None]], [b"data"])
for name, ext in [("empty", b";"), ("bad-name-char", b";bad[=x"), ("no-value", b";a="), ("space-in-name", b"; a b"),
                  ("open-quote", b';a="open'), ("trailing-space", b";a "), ("double-semicolon", b";;"),
                  ("over-line-limit", b";" + b"e" * 5000)]:
    add("chunk-ext", name, chunked(b"%x" % len(ok) + ext, ok), 400, "nothing")

# Request heads: a bare LF never ends a line; one Content-Type per request on every route.
for name, raw_head in [("bare-lf-request-line", "GET / HTTP/1.1\nHost: test\r\n\r\n"),
                       ("bare-lf-header-line", "GET / HTTP/1.1\r\nHost: test\nX: 1\r\n\r\n"),
                       ("bare-lf-final-line", "GET / HTTP/1.1\r\nHost: test\r\n\n"),
                       ("bare-lf-leading-line", "\nGET / HTTP/1.1\r\nHost: test\r\n\r\n"),
                       ("bare-lf-upload", "POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 0\n\r\n")]:
    add("head", name, raw_head.encode(), 400, "nothing")
add("head", "duplicate-content-type-passthrough",
    b"POST /other HTTP/1.1\r\nHost: test\r\nContent-Type: text/plain\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", 400, "nothing")
add("head", "duplicate-content-type-same-value",
    request(B, extra="Content-Type: multipart/form-data; boundary=b0undary\r\n"), 400, "nothing")

with open(os.path.join(OUT, "manifest.json"), "w") as f:
    # One case a line: a diff names the cases it changes.
    f.write('{"_meta": {"generated_by": "scripts/make-hostile-corpus.py"},\n "cases": [\n  ')
    f.write(",\n  ".join(json.dumps(case, ensure_ascii=False) for case in cases))
    f.write("\n ]\n}\n")
from collections import Counter
print(len(cases), "cases", dict(Counter(c["family"] for c in cases)))
