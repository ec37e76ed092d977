/// A JWS signature algorithm FormGate verifies (RFC 7518 section 3, RFC 8037 for EdDSA).
///
/// `none` is not one: a token that names it, or any name not listed here, is refused.
public enum JWSAlgorithm: String, CaseIterable, Sendable {
    /// HMAC with SHA-256.
    case hs256 = "HS256"
    /// HMAC with SHA-384.
    case hs384 = "HS384"
    /// HMAC with SHA-512.
    case hs512 = "HS512"
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    case rs384 = "RS384"
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    case rs512 = "RS512"
    /// RSASSA-PSS with SHA-256, MGF1 with SHA-256, salt as long as the hash.
    case ps256 = "PS256"
    /// RSASSA-PSS with SHA-384, MGF1 with SHA-384, salt as long as the hash.
    case ps384 = "PS384"
    /// RSASSA-PSS with SHA-512, MGF1 with SHA-512, salt as long as the hash.
    case ps512 = "PS512"
    /// ECDSA on P-256 with SHA-256.
    case es256 = "ES256"
    /// ECDSA on P-384 with SHA-384.
    case es384 = "ES384"
    /// EdDSA; FormGate supports the Ed25519 curve.
    case edDSA = "EdDSA"

    /// The family of keys an algorithm is for: the key, not the token, decides it.
    enum Family {
        case hmac, rsaPKCS1, rsaPSS, ecdsa, edDSA
    }

    var family: Family {
        switch self {
        case .hs256, .hs384, .hs512: .hmac
        case .rs256, .rs384, .rs512: .rsaPKCS1
        case .ps256, .ps384, .ps512: .rsaPSS
        case .es256, .es384: .ecdsa
        case .edDSA: .edDSA
        }
    }

    /// The hash the algorithm uses (none for EdDSA, which hashes internally).
    var digest: MessageDigest? {
        switch self {
        case .hs256, .rs256, .ps256, .es256: .sha256
        case .hs384, .rs384, .ps384, .es384: .sha384
        case .hs512, .rs512, .ps512: .sha512
        case .edDSA: nil
        }
    }

    /// Looks an algorithm up by the bytes of a header's `alg` (exact, case-sensitive).
    init?(name: String) {
        self.init(rawValue: name)
    }
}
