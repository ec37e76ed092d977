"""The independent oracle for ClientAuth's JWTVerifier (issue 14): PyJWT (Debian python3-jwt)
and python-cryptography make fresh keys (HS256, RS256, PS256, ES256, ES384, EdDSA), write
their public JWKS and a set of tokens, each with the verdict the Swift verifier must reach.

Usage: pyjwt_oracle.py OUTPUT.json [NOW]
(NOW, Unix seconds, is the clock the tokens are made for: the unit tests freeze it, the
integration test JWTOracleTests passes the time of its run.)
Writes {"now", "issuer", "audience", "leeway", "jwks", "cases": [{"name", "token",
"expect"}]}, where expect is "accept" or a JWTRejection raw value, or "reject" where the
reason depends on which bytes were cut. Exits 2 if PyJWT or cryptography is missing, so the
Swift test fails rather than skips.
"""

import base64
import hashlib
import hmac
import json
import os
import sys

try:
    import jwt
    from jwt.algorithms import ECAlgorithm, HMACAlgorithm, OKPAlgorithm, RSAAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
except ImportError as error:
    print(f"pyjwt_oracle: {error} (install python3-jwt and python3-cryptography)", file=sys.stderr)
    sys.exit(2)

NOW = int(sys.argv[2]) if len(sys.argv) > 2 else 1_767_225_600
ISSUER = "https://id.example.com"
AUDIENCE = "uploads"
LEEWAY = 30


def b64(raw):
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def claims(**overrides):
    base = {"sub": "user-42", "iss": ISSUER, "aud": AUDIENCE, "iat": NOW - 10, "nbf": NOW - 10, "exp": NOW + 600}
    base.update(overrides)
    return {name: value for name, value in base.items() if value is not None}


def hand_signed_hs256(header, payload_bytes, secret):
    """A token PyJWT would refuse to make: signed by hand with HMAC-SHA256."""
    signing_input = b64(json.dumps(header, separators=(",", ":")).encode()) + "." + b64(payload_bytes)
    tag = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + b64(tag)


def flip_middle(segment):
    """The segment with one character in its middle replaced (never a non-canonical tail)."""
    middle = len(segment) // 2
    replacement = "A" if segment[middle] != "A" else "B"
    return segment[:middle] + replacement + segment[middle + 1 :]


def main(output):
    secret = os.urandom(64)
    rsa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    p256 = ec.generate_private_key(ec.SECP256R1())
    p384 = ec.generate_private_key(ec.SECP384R1())
    ed = ed25519.Ed25519PrivateKey.generate()
    rogue = ec.generate_private_key(ec.SECP256R1())
    # PyJWT 2.6 writes EC coordinates without their leading zero bytes (RFC 7518 wants the
    # full 32): one key in 256 gets a short x. Find one, so that case is always exercised.
    short = ec.generate_private_key(ec.SECP256R1())
    while short.public_key().public_numbers().x >= 1 << 248:
        short = ec.generate_private_key(ec.SECP256R1())

    def jwk(text, kid):
        key = json.loads(text)
        key["kid"] = kid
        return key

    jwks = {
        "keys": [
            jwk(HMACAlgorithm.to_jwk(secret), "hs"),
            jwk(RSAAlgorithm.to_jwk(rsa_key.public_key()), "rsa"),
            jwk(ECAlgorithm.to_jwk(p256.public_key()), "p256"),
            jwk(ECAlgorithm.to_jwk(p384.public_key()), "p384"),
            jwk(OKPAlgorithm.to_jwk(ed.public_key()), "ed"),
            jwk(ECAlgorithm.to_jwk(short.public_key()), "p256-short-x"),
        ]
    }
    keys = {"hs": secret, "rsa": rsa_key, "p256": p256, "p384": p384, "ed": ed, "p256-short-x": short}
    cases = []

    def add(name, token, expect):
        cases.append({"name": name, "token": token, "expect": expect})

    def sign(payload, algorithm, kid, **headers):
        return jwt.encode(payload, keys[kid], algorithm=algorithm, headers={"kid": kid, **headers})

    for algorithm, kid in [("HS256", "hs"), ("HS384", "hs"), ("HS512", "hs"), ("RS256", "rsa"), ("RS384", "rsa"),
                           ("RS512", "rsa"), ("PS256", "rsa"), ("ES256", "p256"), ("ES384", "p384"),
                           ("EdDSA", "ed")]:
        add(f"valid {algorithm}", sign(claims(), algorithm, kid), "accept")
        token = sign(claims(), algorithm, kid)
        header, payload, signature = token.split(".")
        add(f"bad signature {algorithm}", ".".join([header, payload, flip_middle(signature)]), "bad_signature")
        add(f"tampered payload {algorithm}",
            ".".join([header, b64(json.dumps(claims(sub="admin")).encode()), signature]), "bad_signature")

    add("valid, P-256 key with a short x in the JWKS", sign(claims(), "ES256", "p256-short-x"), "accept")
    add("valid, audience in a list", sign(claims(aud=["other", AUDIENCE]), "ES256", "p256"), "accept")
    add("valid, exp within the leeway", sign(claims(exp=NOW - LEEWAY // 3), "HS256", "hs"), "accept")
    add("valid, typ JWT", sign(claims(), "RS256", "rsa", typ="JWT"), "accept")
    add("expired", sign(claims(exp=NOW - LEEWAY - 1), "RS256", "rsa"), "expired")
    add("expired EdDSA", sign(claims(exp=NOW - 3600), "EdDSA", "ed"), "expired")
    add("nbf in the future", sign(claims(nbf=NOW + LEEWAY + 60), "ES256", "p256"), "not_yet_valid")
    add("iat in the future", sign(claims(iat=NOW + LEEWAY + 60), "PS256", "rsa"), "not_yet_valid")
    add("wrong audience", sign(claims(aud="billing"), "HS256", "hs"), "wrong_audience")
    add("wrong audience list", sign(claims(aud=["billing", "admin"]), "EdDSA", "ed"), "wrong_audience")
    add("wrong issuer", sign(claims(iss="https://evil.example.com"), "ES384", "p384"), "wrong_issuer")
    add("no exp", sign(claims(exp=None), "HS256", "hs"), "missing_claim")
    add("no aud", sign(claims(aud=None), "RS256", "rsa"), "missing_claim")
    add("unknown kid", jwt.encode(claims(), rogue, algorithm="ES256", headers={"kid": "rogue"}), "unknown_key")
    add("known kid, other key's signature",
        jwt.encode(claims(), rogue, algorithm="ES256", headers={"kid": "p256"}), "bad_signature")
    add("kid of a P-256 key, alg ES384",
        jwt.encode(claims(), p384, algorithm="ES384", headers={"kid": "p256"}), "unsupported_algorithm")
    add("alg none", jwt.encode(claims(), None, algorithm="none"), "unsupported_algorithm")
    add("alg none with kid", jwt.encode(claims(), None, algorithm="none", headers={"kid": "hs"}),
        "unsupported_algorithm")
    pem = rsa_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    payload = json.dumps(claims()).encode()
    add("RS256 public key as HS256 secret, kid rsa",
        hand_signed_hs256({"alg": "HS256", "kid": "rsa", "typ": "JWT"}, payload, pem), "unsupported_algorithm")
    add("RS256 public key as HS256 secret, kid hs",
        hand_signed_hs256({"alg": "HS256", "kid": "hs", "typ": "JWT"}, payload, pem), "bad_signature")
    jwk_der = rsa_key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.PKCS1)
    add("RS256 modulus bytes as HS256 secret",
        hand_signed_hs256({"alg": "HS256", "kid": "hs"}, payload, jwk_der), "bad_signature")
    add("duplicate claim",
        hand_signed_hs256({"alg": "HS256", "kid": "hs"}, b'{"sub":"a","sub":"b","exp":%d}' % (NOW + 60), secret),
        "malformed")
    add("crit header", sign(claims(), "HS256", "hs", crit=["exp"]), "malformed")
    add("typ other than JWT", sign(claims(), "HS256", "hs", typ="at+jwt"), "malformed")
    add("64 KiB token", sign(claims(padding="x" * 65536), "HS256", "hs"), "too_large")
    valid = sign(claims(), "HS256", "hs")
    header, payload_segment, signature = valid.split(".")
    add("truncated: no signature segment", header + "." + payload_segment, "malformed")
    add("truncated: empty signature", header + "." + payload_segment + ".", "malformed")
    add("truncated: half the token", valid[: len(valid) // 2], "reject")
    add("truncated: signature short by 4", valid[:-4], "reject")
    add("padded signature", valid + "=" * ((4 - len(signature) % 4) % 4 or 4), "malformed")
    header_padded = header + "=" * ((4 - len(header) % 4) % 4 or 4)
    add("padded header", ".".join([header_padded, payload_segment, signature]), "malformed")
    add("standard base64 signature",
        ".".join([header, payload_segment, signature.replace("-", "+").replace("_", "/") + "+/"]), "malformed")
    add("four segments", valid + ".e30", "malformed")
    der = p256.sign(b"x", ec.ECDSA(__import__("cryptography.hazmat.primitives.hashes", fromlist=["SHA256"]).SHA256()))
    es = sign(claims(), "ES256", "p256").split(".")
    add("ES256 with a DER signature", ".".join([es[0], es[1], b64(der)]), "bad_signature")

    with open(output, "w") as handle:
        json.dump({"now": NOW, "issuer": ISSUER, "audience": AUDIENCE, "leeway": LEEWAY, "jwks": jwks,
                   "cases": cases}, handle)


if __name__ == "__main__":
    main(sys.argv[1])
