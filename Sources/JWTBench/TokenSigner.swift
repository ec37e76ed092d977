import CCrypto

/// Makes a key pair with OpenSSL and signs JWTs with it, so the bench measures verification
/// of tokens made the way an identity provider makes them (no fixtures, no Python).
final class TokenSigner {
    let algorithm: String
    /// The private key (`EVP_PKEY`), or `nil` for HMAC.
    private let key: OpaquePointer?
    private let secret: [UInt8]

    /// An HMAC signer with a random 32-byte secret.
    init(hmacSecret: [UInt8]) {
        algorithm = "HS256"
        key = nil
        secret = hmacSecret
    }

    /// A signer with a fresh key: `RS256` (2048-bit RSA), `ES256` (P-256) or `EdDSA`.
    init(algorithm: String) {
        self.algorithm = algorithm
        secret = []
        let (type, setUp): (String, (OpaquePointer) -> Int32) =
            switch algorithm {
            case "RS256": ("RSA", { EVP_PKEY_CTX_set_rsa_keygen_bits($0, 2048) })
            case "ES256": ("EC", { EVP_PKEY_CTX_set_group_name($0, "P-256") })
            default: ("ED25519", { _ in 1 })
            }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil), EVP_PKEY_keygen_init(context) == 1,
            setUp(context) == 1
        else { fatalError("key generation setup failed") }
        defer { EVP_PKEY_CTX_free(context) }
        var made: OpaquePointer?
        guard EVP_PKEY_generate(context, &made) == 1, let made else { fatalError("key generation failed") }
        key = made
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// The public JWK as JSON text.
    var publicJWK: String {
        guard let key else { return "{\"kty\":\"oct\",\"k\":\"\(base64url(secret))\"}" }
        switch algorithm {
        case "RS256":
            return
                "{\"kty\":\"RSA\",\"n\":\"\(base64url(bigNumber(key, "n")))\",\"e\":\"\(base64url(bigNumber(key, "e")))\"}"
        case "ES256":
            var point = [UInt8](repeating: 0, count: 65)
            var length = 0
            guard EVP_PKEY_get_octet_string_param(key, "encoded-pub-key", &point, point.count, &length) == 1,
                length == 65
            else { fatalError("no EC point") }
            return
                "{\"kty\":\"EC\",\"crv\":\"P-256\",\"x\":\"\(base64url(point[1..<33]))\",\"y\":\"\(base64url(point[33...]))\"}"
        default:
            var raw = [UInt8](repeating: 0, count: 32)
            var length = raw.count
            guard EVP_PKEY_get_raw_public_key(key, &raw, &length) == 1 else { fatalError("no Ed25519 key") }
            return "{\"kty\":\"OKP\",\"crv\":\"Ed25519\",\"x\":\"\(base64url(raw))\"}"
        }
    }

    /// A compact JWS of `claims` (JSON text).
    func sign(claims: String) -> [UInt8] {
        let input =
            base64url(Array("{\"alg\":\"\(algorithm)\",\"typ\":\"JWT\"}".utf8)) + "."
            + base64url(Array(claims.utf8))
        let bytes = Array(input.utf8)
        var signature = [UInt8](repeating: 0, count: 512)
        var length = signature.count
        guard let key else {
            var tagLength: UInt32 = 0
            guard
                HMAC(EVP_sha256(), secret, Int32(secret.count), bytes, bytes.count, &signature, &tagLength)
                    != nil
            else { fatalError("HMAC failed") }
            return Array((input + "." + base64url(signature[0..<Int(tagLength)])).utf8)
        }
        guard let context = EVP_MD_CTX_new() else { fatalError("no context") }
        defer { EVP_MD_CTX_free(context) }
        let digest = algorithm == "EdDSA" ? nil : EVP_sha256()
        guard EVP_DigestSignInit(context, nil, digest, nil, key) == 1,
            EVP_DigestSign(context, &signature, &length, bytes, bytes.count) == 1
        else { fatalError("signing failed") }
        var raw = Array(signature[0..<length])
        if algorithm == "ES256" { raw = joseSignature(der: raw) }
        return Array((input + "." + base64url(raw)).utf8)
    }

    /// `r || s`, 32 bytes each, from a DER ECDSA signature.
    private func joseSignature(der: [UInt8]) -> [UInt8] {
        var cursor: UnsafePointer<UInt8>? = nil
        return der.withUnsafeBufferPointer { buffer in
            cursor = buffer.baseAddress
            guard let parsed = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else {
                fatalError("bad DER signature")
            }
            defer { ECDSA_SIG_free(parsed) }
            var out = [UInt8](repeating: 0, count: 64)
            _ = BN_bn2binpad(ECDSA_SIG_get0_r(parsed), &out, 32)
            out.withUnsafeMutableBufferPointer {
                _ = BN_bn2binpad(ECDSA_SIG_get0_s(parsed), $0.baseAddress! + 32, 32)
            }
            return out
        }
    }

    private func bigNumber(_ key: OpaquePointer, _ name: String) -> [UInt8] {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else { fatalError("no \(name)") }
        defer { BN_free(number) }
        var out = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
        _ = BN_bn2bin(number, &out)
        return out
    }
}

/// base64url without padding.
func base64url(_ bytes: some Collection<UInt8>) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    let input = Array(bytes)
    var out: [UInt8] = []
    var index = 0
    while index < input.count {
        let chunk = input[index..<min(index + 3, input.count)]
        let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
        for position in 0...chunk.count { out.append(alphabet[(value >> (18 - 6 * position)) & 63]) }
        index += 3
    }
    return String(decoding: out, as: UTF8.self)
}
