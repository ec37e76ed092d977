/// Why a JSON Web Key was not made into a verification key. `JWKSet` skips such keys and
/// reports the reason (`formgate check` prints it); a set with no usable key is an error.
public enum JWKError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The JWK is not a JSON object.
    case notAnObject
    /// `kty` names a key type FormGate does not verify with (or is absent).
    case unsupportedKeyType(String)
    /// `crv` names a curve FormGate does not verify with.
    case unsupportedCurve(String)
    /// `use` is present and is not `sig`, or `key_ops` lacks `verify`.
    case notForSignatures
    /// Private key members (`d`, `p`, `q`, …) are present: a published set must not hold them.
    case privateKeyMaterial(String)
    /// A required member is absent.
    case missingMember(String)
    /// A member has the wrong type, is not canonical base64url, or has the wrong length.
    case invalidMember(String)
    /// `alg` names no supported algorithm, or one the key type is not for.
    case unsupportedAlgorithm(String)
    /// An RSA modulus under 2048 bits, or an HMAC secret under 256 bits.
    case keyTooShort(bits: Int)
    /// OpenSSL refused the key (for EC keys: the point is not on the curve).
    case rejectedByOpenSSL
    /// Another key of the set already has this `kid`.
    case duplicateKeyID(String)

    public var description: String {
        switch self {
        case .notAnObject: "not a JSON object"
        case .unsupportedKeyType(let type): "unsupported kty \"\(type)\""
        case .unsupportedCurve(let curve): "unsupported crv \"\(curve)\""
        case .notForSignatures: "not a signature key (use / key_ops)"
        case .privateKeyMaterial(let member): "holds private key material (\"\(member)\")"
        case .missingMember(let member): "missing \"\(member)\""
        case .invalidMember(let member): "invalid \"\(member)\""
        case .unsupportedAlgorithm(let algorithm): "alg \"\(algorithm)\" not supported for this key"
        case .keyTooShort(let bits): "key too short (\(bits) bits)"
        case .rejectedByOpenSSL: "refused by OpenSSL (not a valid public key)"
        case .duplicateKeyID(let keyID): "duplicate kid \"\(keyID)\""
        }
    }
}
