"""TLS clients for FormGate's TLS listener tests (Python's ssl module, an independent TLS
stack from FormGate's use of OpenSSL's server side). Each command prints JSON lines.

  hello PORT SNI CAFILE [MAX_VERSION]     one handshake: version, ALPN, peer subject, or the error
  resume PORT SNI CAFILE VERSION          two connections, the second with the first's session
  upload PORT SNI CAFILE BODY BOUNDARY [GATE]
        POST BODY (a multipart file) as multipart/form-data; boundary=BOUNDARY; prints the
        handshake line, sends half the body, waits for the file GATE to exist (when given),
        sends the rest and prints the response body
  abort PORT COUNT                         COUNT connections that each send a cut ClientHello,
                                           garbage or nothing, then close
"""
import json
import os
import socket
import ssl
import sys
import time
import warnings

warnings.filterwarnings("ignore", category=DeprecationWarning)  # TLS 1.0/1.1 are offered on purpose
VERSIONS = {"1.0": ssl.TLSVersion.TLSv1, "1.1": ssl.TLSVersion.TLSv1_1, "1.2": ssl.TLSVersion.TLSv1_2,
            "1.3": ssl.TLSVersion.TLSv1_3}


def context(cafile, max_version=None):
    ctx = ssl.create_default_context(cafile=cafile)
    ctx.set_alpn_protocols(["http/1.1"])
    if max_version:
        ctx.maximum_version = VERSIONS[max_version]
        if max_version in ("1.0", "1.1"):
            # Debian's OpenSSL will not even offer TLS 1.0/1.1 at its default security level
            # 2: level 0 makes this client offer them, so a refusal is the server's.
            ctx.minimum_version = ssl.TLSVersion.TLSv1
            ctx.set_ciphers("DEFAULT@SECLEVEL=0")
    return ctx


def describe(tls):
    subject = dict(item[0] for item in tls.getpeercert()["subject"])
    return {"version": tls.version(), "alpn": tls.selected_alpn_protocol(), "subject": subject.get("commonName"),
            "serial": tls.getpeercert()["serialNumber"], "reused": tls.session_reused}


def connect(port, sni, ctx, session=None):
    raw = socket.create_connection(("127.0.0.1", port), timeout=60)
    return ctx.wrap_socket(raw, server_hostname=sni, session=session)


def read_response(tls):
    data = b""
    while True:
        chunk = tls.recv(65536)
        if not chunk:
            return data
        data += chunk


def hello(port, sni, cafile, max_version=None):
    try:
        with connect(int(port), sni, context(cafile, max_version)) as tls:
            print(json.dumps(describe(tls)))
    except (ssl.SSLError, OSError) as error:
        print(json.dumps({"error": str(error)}))


def resume(port, sni, cafile, version):
    ctx = context(cafile, version)
    ctx.minimum_version = VERSIONS[version]
    session = None
    for _ in range(2):
        with connect(int(port), sni, ctx, session) as tls:
            # A request and its answer: TLS 1.3 sends its tickets after the handshake.
            tls.sendall(b"GET /resume HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            read_response(tls)
            print(json.dumps(describe(tls)))
            session = tls.session


def upload(port, sni, cafile, body_path, boundary, gate=None):
    body = open(body_path, "rb").read()
    with connect(int(port), sni, context(cafile)) as tls:
        print(json.dumps(describe(tls)), flush=True)
        tls.sendall((f"POST /upload HTTP/1.1\r\nHost: {sni}\r\nConnection: close\r\n"
                     f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                     f"Content-Length: {len(body)}\r\n\r\n").encode())
        half = len(body) // 2
        tls.sendall(body[:half])
        print(json.dumps({"sent": half}), flush=True)
        if gate:
            while not os.path.exists(gate):
                time.sleep(0.02)
        tls.sendall(body[half:])
        response = read_response(tls)
        head, _, payload = response.partition(b"\r\n\r\n")
        print(json.dumps({"status": int(head.split(b" ")[1]), "body": payload.decode()}), flush=True)


def client_hello():
    """The first flight of a real TLS client, made in memory."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="a.test")
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()


def abort(port, count):
    hello_bytes = client_hello()
    for index in range(int(count)):
        raw = socket.create_connection(("127.0.0.1", int(port)), timeout=60)
        kind = index % 3
        if kind == 0:
            raw.sendall(hello_bytes[: 5 + index % (len(hello_bytes) - 5)])
        elif kind == 1:
            raw.sendall(b"\x16\x03\x01\xff\xff" + os.urandom(64))
        raw.close()
    print(json.dumps({"aborted": int(count)}))


if __name__ == "__main__":
    {"hello": hello, "resume": resume, "upload": upload, "abort": abort}[sys.argv[1]](*sys.argv[2:])
