#!/usr/bin/env python3
"""Writes Tests/Fixtures/hostile-auth/: hostile requests against the routes with `auth:` that
AuthHostileTests configures (see that file for the config), as raw files, with manifest.json
giving each one's family, the status FormGate must answer and the upstream's share ("nothing":
no connection at all; "accepted": the one control case per route that must reach it), plus
the JWKS (good keys beside odd ones) and the API-key file those routes load.

Tokens are made here with the standard library (hmac, hashlib, base64): no FormGate code and no
JWT library, so a mistake in FormGate's verifier cannot hide in a shared helper.
Run by a developer (`python3 scripts/make-auth-hostile-corpus.py`); tests read the files."""
import base64, hashlib, hmac, json, os

OUT = os.path.join(os.path.dirname(__file__), "..", "Tests", "Fixtures", "hostile-auth")
SECRET = b"hostile-secret-0123456789abcdef-0123456789"   # the jwt route's HS256 secret (AuthHostileTests)
JWKS_SECRET = b"jwks-oct-key-0123456789abcdef-0123456789"  # the `good` oct key of jwks.json
API_KEY = "fg-key-alice-0123456789abcdef"
NOW = 4_000_000_000  # tokens expire long after the tests run (2096); `expired` ones long before
cases = []


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def segment(value):
    return b64(value if isinstance(value, bytes) else json.dumps(value, separators=(",", ":")).encode())


def token(header=None, claims=None, key=SECRET, signature=None, raw_header=None, raw_claims=None):
    header = {"alg": "HS256", "typ": "JWT"} if header is None else header
    claims = {"sub": "alice", "iss": "hostile", "aud": "uploads", "exp": NOW} if claims is None else claims
    signing = (raw_header or segment(header)) + "." + (raw_claims or segment(claims))
    if signature is None:
        signature = b64(hmac.new(key, signing.encode(), hashlib.sha256).digest())
    return signing + "." + signature


BODY = (b"--b0undary\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n"
        b"Content-Type: text/plain\r\n\r\nsecret upload\r\n--b0undary--\r\n")


def request(path, extra="", body=BODY, target=None):
    head = (f"POST {target or path} HTTP/1.1\r\nHost: test\r\nContent-Type: multipart/form-data; boundary=b0undary\r\n"
            f"Content-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n")
    return head.encode("latin-1") + body


def add(family, name, raw, status, upstream="nothing", reason=None):
    file = f"{len(cases):03d}-{family}-{name}.http"
    with open(os.path.join(OUT, file), "wb") as handle:
        handle.write(raw)
    case = {"family": family, "name": name, "file": file, "status": status, "upstream": upstream}
    if reason:
        case["reason"] = reason
    cases.append(case)


def bearer(value):
    return f"Authorization: Bearer {value}\r\n"


os.makedirs(OUT, exist_ok=True)
for old in os.listdir(OUT):
    if old.endswith(".http"):
        os.remove(os.path.join(OUT, old))

# --- the jwt route (/jwt): HS256, issuer `hostile`, audience `uploads`
good = token()
add("jwt", "control-valid-token", request("/jwt", bearer(good)), 200, "accepted")
add("jwt", "no-authorization", request("/jwt"), 401)
add("jwt", "basic-scheme", request("/jwt", "Authorization: Basic YWxpY2U6c2VjcmV0\r\n"), 401)
add("jwt", "empty-bearer", request("/jwt", "Authorization: Bearer\r\n"), 401)
add("jwt", "bearer-spaces-only", request("/jwt", "Authorization: Bearer    \r\n"), 401)
add("jwt", "two-authorization-fields", request("/jwt", bearer(good) + bearer(good)), 401,
    reason="two credentials are ambiguous (RFC 6750 §3.1 invalid_request)")
add("jwt", "authorization-flood", request("/jwt", bearer("x") * 300 + bearer(good)), 400,
    reason="more fields than the head parser takes: refused as malformed HTTP before auth runs")
add("jwt", "authorization-fields-within-limits", request("/jwt", bearer("x") * 40 + bearer(good)), 401,
    reason="41 credentials are ambiguous")
add("jwt", "over-header-limit", request("/jwt", bearer("a" * 40000)), 431,
    reason="the head is over limits.header_bytes before any token is read")
add("jwt", "over-token-limit", request("/jwt", bearer(token(claims={"sub": "alice", "iss": "hostile",
    "aud": "uploads", "exp": NOW, "pad": "p" * 9000}))), 401, reason="over the 8 KiB token limit")
for alg in ["none", "None", "NONE", "nOnE"]:
    add("jwt", f"alg-{alg}", request("/jwt", bearer(token(header={"alg": alg, "typ": "JWT"}, signature=""))), 401)
add("jwt", "alg-none-with-signature", request("/jwt", bearer(token(header={"alg": "none"}))), 401)
add("jwt", "empty-signature", request("/jwt", bearer(token(signature=""))), 401)
add("jwt", "wrong-key", request("/jwt", bearer(token(key=b"another-secret-0123456789abcdef-012345678"))), 401)
add("jwt", "truncated-signature", request("/jwt", bearer(good[:-1])), 401)
add("jwt", "padded-signature", request("/jwt", bearer(good + "=")), 401)
add("jwt", "padded-header", request("/jwt", bearer(good.replace(".", "=.", 1))), 401)
add("jwt", "standard-base64-alphabet", request("/jwt", bearer(good.replace("-", "+").replace("_", "/") + "+/")), 401)
add("jwt", "header-not-json", request("/jwt", bearer(token(raw_header=b64(b"{alg:HS256}")))), 401)
add("jwt", "claims-not-json", request("/jwt", bearer(token(raw_claims=b64(b"{\"sub\":\"alice\",}")))), 401)
add("jwt", "claims-trailing-garbage", request("/jwt", bearer(token(raw_claims=segment({"sub": "alice", "iss": "hostile",
    "aud": "uploads", "exp": NOW}) + b64(b"x")))), 401)
add("jwt", "duplicate-alg", request("/jwt", bearer(token(raw_header=b64(b'{"alg":"none","alg":"HS256"}')))), 401,
    reason="duplicate members are refused: parsers disagree on which one wins")
add("jwt", "claims-array", request("/jwt", bearer(token(raw_claims=b64(b"[1,2,3]")))), 401)
add("jwt", "claims-string", request("/jwt", bearer(token(raw_claims=b64(b'"alice"')))), 401)
add("jwt", "claims-depth-bomb", request("/jwt", bearer(token(raw_claims=b64(b"[" * 3000 + b"]" * 3000)))), 401)
add("jwt", "exp-as-string", request("/jwt", bearer(token(claims={"sub": "alice", "iss": "hostile", "aud": "uploads",
    "exp": str(NOW)}))), 401)
add("jwt", "exp-huge-number", request("/jwt", bearer(token(raw_claims=b64(
    b'{"sub":"alice","iss":"hostile","aud":"uploads","exp":1e400}')))), 401)
add("jwt", "exp-missing", request("/jwt", bearer(token(claims={"sub": "alice", "iss": "hostile", "aud": "uploads"}))), 401)
add("jwt", "expired", request("/jwt", bearer(token(claims={"sub": "alice", "iss": "hostile", "aud": "uploads",
    "exp": 1_000_000_000}))), 401)
add("jwt", "not-yet-valid", request("/jwt", bearer(token(claims={"sub": "alice", "iss": "hostile", "aud": "uploads",
    "exp": NOW, "nbf": NOW - 10}))), 401)
add("jwt", "wrong-issuer", request("/jwt", bearer(token(claims={"sub": "alice", "iss": "evil", "aud": "uploads",
    "exp": NOW}))), 401)
add("jwt", "wrong-audience", request("/jwt", bearer(token(claims={"sub": "alice", "iss": "hostile", "aud": "other",
    "exp": NOW}))), 401)
add("jwt", "audience-list-without-ours", request("/jwt", bearer(token(claims={"sub": "alice", "iss": "hostile",
    "aud": ["a", "b"], "exp": NOW}))), 401)
add("jwt", "three-dots", request("/jwt", bearer(good + ".")), 401)
add("jwt", "two-segments", request("/jwt", bearer(good.rsplit(".", 1)[0])), 401)
add("jwt", "jwe-five-segments", request("/jwt", bearer("eyJhbGciOiJSU0EtT0FFUCJ9.a.b.c.d")), 401)
add("jwt", "non-ascii-token", request("/jwt", "Authorization: Bearer \u00e9\u00e9.\u00e9.\u00e9\r\n"), 401)
add("jwt", "crit-header", request("/jwt", bearer(token(header={"alg": "HS256", "crit": ["exp"]}))), 401)
add("jwt", "typ-jwe", request("/jwt", bearer(token(header={"alg": "HS256", "typ": "JWE"}))), 401)
add("jwt", "rs256-on-hmac-key", request("/jwt", bearer(token(header={"alg": "RS256", "typ": "JWT"}))), 401,
    reason="the key is an HMAC secret: RS256 cannot be verified with it")
add("jwt", "hs512-on-hs256-secret", request("/jwt", bearer(token(header={"alg": "HS512"}))), 401)
add("jwt", "token-in-query-ignored", request("/jwt", target=f"/jwt?access_token={good}"), 401,
    reason="the route reads the token from Authorization only")

# --- the jwks route (/jwks): jwks.json holds one good oct key beside odd keys that are skipped
jwks = {"keys": [
    {"kty": "oct", "kid": "good", "alg": "HS256", "k": b64(JWKS_SECRET)},
    {"kty": "RSA", "kid": "short-rsa", "n": b64(b"\xc3" * 64), "e": "AQAB"},
    {"kty": "EC", "kid": "ec-no-y", "crv": "P-256", "x": b64(b"\x01" * 32)},
    {"kty": "EC", "kid": "ec-off-curve", "crv": "P-256", "x": b64(b"\x01" * 32), "y": b64(b"\x02" * 32)},
    {"kty": "OKP", "kid": "x25519", "crv": "X25519", "x": b64(b"\x09" * 32)},
    {"kty": "oct", "kid": "enc-use", "use": "enc", "k": b64(b"e" * 32)},
    {"kty": "oct", "kid": "short-oct", "alg": "HS256", "k": b64(b"s" * 16)},
    {"kty": "RSA", "kid": "private-rsa", "n": b64(b"\xc3" * 256), "e": "AQAB", "d": b64(b"\x01" * 256)},
    {"kty": "weird", "kid": "unknown-kty"},
]}
with open(os.path.join(OUT, "jwks.json"), "w") as handle:
    json.dump(jwks, handle, indent=1)
def jwks_token(kid, key=JWKS_SECRET, alg="HS256"):
    header = {"alg": alg, "typ": "JWT"}
    if kid is not None:
        header["kid"] = kid
    return token(header=header, key=key)
add("jwks", "control-good-kid", request("/jwks", bearer(jwks_token("good"))), 200, "accepted")
add("jwks", "unknown-kid", request("/jwks", bearer(jwks_token("nobody"))), 401)
add("jwks", "kid-number", request("/jwks", bearer(token(header={"alg": "HS256", "kid": 7}, key=JWKS_SECRET))), 401)
add("jwks", "kid-huge", request("/jwks", bearer(jwks_token("k" * 5000))), 401)
for kid, key in [("short-rsa", b"e" * 32), ("ec-no-y", b"e" * 32), ("ec-off-curve", b"e" * 32),
                 ("x25519", b"e" * 32), ("enc-use", b"e" * 32), ("short-oct", b"s" * 16), ("private-rsa", b"e" * 32),
                 ("unknown-kty", b"e" * 32)]:
    add("jwks", f"odd-key-{kid}", request("/jwks", bearer(jwks_token(kid, key=key))), 401,
        reason="the key was skipped when jwks.json loaded (a token signed with its secret is refused)")
add("jwks", "rs256-with-oct-kid", request("/jwks", bearer(jwks_token("good", alg="RS256"))), 401)

# --- the cookie route (/cookie): token_from: { cookie: session }
add("cookie", "control-cookie", request("/cookie", f"Cookie: theme=dark; session={good}\r\n"), 200, "accepted")
add("cookie", "two-session-cookies", request("/cookie", f"Cookie: session={good}; session={good}\r\n"), 401)
add("cookie", "session-in-two-fields", request("/cookie", f"Cookie: session={good}\r\nCookie: session={good}\r\n"), 401)
add("cookie", "bearer-instead-of-cookie", request("/cookie", bearer(good)), 401)
add("cookie", "cookie-name-prefix", request("/cookie", f"Cookie: xsession={good}\r\n"), 401)

# --- the api_keys route (/keys): header X-Api-Key
digest = hashlib.sha256(API_KEY.encode()).hexdigest()
with open(os.path.join(OUT, "api-keys.txt"), "w") as handle:
    handle.write("# name: sha256(key) — AuthHostileTests' api_keys route\n")
    handle.write(f"alice: {digest}\n")
    handle.write(f"bob: {hashlib.sha256(b'fg-key-bob-0123456789abcdef').hexdigest()}\n")
add("keys", "control-valid-key", request("/keys", f"X-Api-Key: {API_KEY}\r\n"), 200, "accepted")
add("keys", "no-key", request("/keys"), 401)
add("keys", "wrong-key", request("/keys", "X-Api-Key: fg-key-mallory-0123456789abcd\r\n"), 401)
add("keys", "key-digest-instead-of-key", request("/keys", f"X-Api-Key: {digest}\r\n"), 401,
    reason="the file holds digests: presenting one is not presenting the key")
add("keys", "two-key-fields", request("/keys", f"X-Api-Key: {API_KEY}\r\nX-Api-Key: {API_KEY}\r\n"), 401)
add("keys", "empty-key", request("/keys", "X-Api-Key: \r\n"), 401)
add("keys", "huge-key", request("/keys", "X-Api-Key: " + "k" * 20000 + "\r\n"), 401)
add("keys", "key-with-trailing-space-variant", request("/keys", f"X-Api-Key: {API_KEY}x\r\n"), 401)

# --- the auth-service route (/service): the service (Tests/ProxyIntegrationTests/Resources/auth_service.py) answers as X-Service-Mode says
add("service", "control-allow", request("/service", "X-Service-Mode: allow\r\n"), 200, "accepted")
add("service", "forged-identity-header", request("/service", "X-Service-Mode: allow\r\nX-User-Id: root\r\n"), 200,
    "accepted", reason="the client's X-User-Id is replaced by the service's (AuthHostileTests checks the upstream)")
for name in ["garbage", "status-500", "status-302", "status-200-forged-identity-crlf", "truncated-head",
             "huge-head", "closes-at-once", "slow"]:
    add("service", name, request("/service", f"X-Service-Mode: {name}\r\n"), 503,
        reason="anything but 2xx, 401 or 403 fails closed")

with open(os.path.join(OUT, "manifest.json"), "w") as handle:
    handle.write('{"_meta": {"generated_by": "scripts/make-auth-hostile-corpus.py"},\n "cases": [\n  ')
    handle.write(",\n  ".join(json.dumps(case, ensure_ascii=False) for case in cases))
    handle.write("\n ]\n}\n")
from collections import Counter
print(len(cases), "cases", dict(Counter(c["family"] for c in cases)))
