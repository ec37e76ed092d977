import CCrypto
import ClientAuth

/// base64url without padding, for building test tokens.
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

func base64url(_ text: String) -> String { base64url(Array(text.utf8)) }

/// Makes HS256/384/512 tokens from raw header and claims JSON text (so tests can write
/// any header, including ones no JWT library would produce).
struct HMACTokenMaker {
    var secret: [UInt8]

    func token(header: String, claims: String) -> String {
        let input = base64url(header) + "." + base64url(claims)
        return input + "." + base64url(tag(input, algorithm: Self.algorithm(in: header)))
    }

    func tag(_ input: String, algorithm: String) -> [UInt8] {
        let digest =
            switch algorithm {
            case "HS384": EVP_sha384()
            case "HS512": EVP_sha512()
            default: EVP_sha256()
            }
        var out = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        let bytes = Array(input.utf8)
        _ = HMAC(digest, secret, Int32(secret.count), bytes, bytes.count, &out, &length)
        return Array(out[0..<Int(length)])
    }

    private static func algorithm(in header: String) -> String {
        for name in ["HS384", "HS512"] where header.contains(name) { return name }
        return "HS256"
    }
}

/// A verifier over one shared secret.
func secretVerifier(_ secret: [UInt8], settings: JWTVerifier.Settings = .init()) throws -> JWTVerifier {
    JWTVerifier(keys: JWKSet(keys: [try JWK.sharedSecret(secret)]), settings: settings)
}

/// The rejection, or `nil` when the token verified.
func rejection(_ result: Result<VerifiedToken, JWTRejection>) -> JWTRejection? {
    if case .failure(let reason) = result { return reason }
    return nil
}
