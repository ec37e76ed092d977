/// Why `JWTVerifier` refused a token: a fixed set, whose raw values are stable and safe as a
/// metric label (`formgate_auth_total{reason=…}`). None carries token contents, and the
/// client is told only that the token is invalid (RFC 6750 `invalid_token`).
public enum JWTRejection: String, Error, CaseIterable, Sendable {
    /// Not three base64url segments of JSON objects; a header member of the wrong type;
    /// `typ` other than JWT; `crit` present; a registered claim of the wrong type.
    case malformed = "malformed"
    /// Longer than the verifier's `maximumTokenBytes`.
    case tooLarge = "too_large"
    /// `alg` is `none`, unknown, or not one any configured key is for.
    case unsupportedAlgorithm = "unsupported_algorithm"
    /// The `kid` names no key, or without a `kid` more than one key fits the algorithm.
    case unknownKey = "unknown_key"
    /// The signature does not verify (or has the wrong length for the algorithm).
    case badSignature = "bad_signature"
    /// `exp` is past (beyond the leeway).
    case expired = "expired"
    /// `nbf` or `iat` is in the future (beyond the leeway).
    case notYetValid = "not_yet_valid"
    /// `iss` is not the configured issuer.
    case wrongIssuer = "wrong_issuer"
    /// `aud` names none of the configured audiences.
    case wrongAudience = "wrong_audience"
    /// A claim the configuration requires is absent (`exp`, `iss` or `aud` when configured,
    /// or one of `required_claims`).
    case missingClaim = "missing_claim"
}
