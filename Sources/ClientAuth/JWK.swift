/// One verification key: a JSON Web Key (RFC 7517) or a shared secret, turned into OpenSSL
/// objects once, when the configuration loads.
///
/// The key type decides which algorithms verify with it: `oct` and shared secrets only
/// HS256/384/512 (each only with a secret at least as long as its hash), `RSA` only
/// RS256/384/512 and PS256/384/512 with a modulus of 2048 bits or more, `EC` P-256 only ES256
/// and P-384 only ES384, `OKP` Ed25519 only EdDSA. A JWK's own `alg`, when present, narrows
/// that to one. So an RSA public key can never be used as an HMAC secret.
public struct JWK: Sendable {
    /// The JWK key type (`kty`): `RSA`, `EC`, `OKP` or `oct`.
    public let keyType: String
    /// The key ID (`kid`), if the JWK has one.
    public let keyID: String?
    /// The algorithm the JWK is restricted to (`alg`), if it names one.
    public let algorithm: JWSAlgorithm?

    /// The OpenSSL side.
    enum Material: Sendable {
        case publicKey(PublicKey)
        case secret(HMACKey)
    }

    let material: Material

    private init(keyType: String, keyID: String?, algorithm: JWSAlgorithm?, material: Material) {
        self.keyType = keyType
        self.keyID = keyID
        self.algorithm = algorithm
        self.material = material
    }

    /// A key for HS256/384/512 from a shared secret (the configuration's `secret`, after
    /// `${ENV}` expansion): at least 32 bytes; HS384 needs 48 and HS512 64.
    public static func sharedSecret(_ secret: some Collection<UInt8>, keyID: String? = nil) throws(JWKError)
        -> JWK
    {
        let bytes = Array(secret)
        guard bytes.count >= 32 else { throw .keyTooShort(bits: bytes.count * 8) }
        guard let key = HMACKey(secret: bytes) else { throw .rejectedByOpenSSL }
        return JWK(keyType: "oct", keyID: keyID, algorithm: nil, material: .secret(key))
    }

    /// Whether a token signed with `algorithm` may be verified with this key.
    public func fits(_ algorithm: JWSAlgorithm) -> Bool {
        if let own = self.algorithm, own != algorithm { return false }
        switch material {
        case .publicKey(let key): return key.fits(algorithm)
        case .secret(let key): return key.fits(algorithm)
        }
    }

    /// The key size in bits (the modulus for RSA, the curve for EC and OKP, the secret's length).
    public var bits: Int {
        switch material {
        case .publicKey(let key): key.bits
        case .secret(let key): key.byteCount * 8
        }
    }

    /// Whether `signature` is a valid `algorithm` signature of `input`; `fits(algorithm)`
    /// must hold.
    func verify(_ algorithm: JWSAlgorithm, input: UnsafeRawBufferPointer, signature: UnsafeRawBufferPointer)
        -> Bool
    {
        switch material {
        case .publicKey(let key): key.verify(algorithm, input: input, signature: signature)
        case .secret(let key): key.verify(algorithm, input: input, signature: signature)
        }
    }
}

extension JWK {
    /// Makes a key from one member of a JWKS `keys` array.
    ///
    /// Refused (with the reason): unknown `kty` or `crv`, `use` other than `sig`, `key_ops`
    /// without `verify`, private members, missing or malformed members, EC coordinates longer
    /// than the curve's (shorter ones are left-padded, see `coordinate`) or Ed25519 keys not
    /// of 32 bytes, an `alg` the key type is not for, RSA under 2048
    /// bits, an `oct` key under 256 bits, an EC point not on its curve.
    public init(json value: JSONValue) throws(JWKError) {
        guard let object = value.objectValue else { throw .notAnObject }
        guard let keyType = object["kty"]?.stringValue else { throw .missingMember("kty") }
        let keyID = try Self.optionalString(object, "kid")
        if let use = try Self.optionalString(object, "use"), use != "sig" { throw .notForSignatures }
        if let operations = object["key_ops"] {
            guard let list = operations.arrayValue else { throw .invalidMember("key_ops") }
            guard list.contains(.string("verify")) else { throw .notForSignatures }
        }
        var algorithm: JWSAlgorithm?
        if let name = try Self.optionalString(object, "alg") {
            guard let known = JWSAlgorithm(name: name) else { throw .unsupportedAlgorithm(name) }
            algorithm = known
        }
        let material = try Self.material(keyType: keyType, object)
        self.init(keyType: keyType, keyID: keyID, algorithm: algorithm, material: material)
        if let algorithm, !fits(algorithm) { throw .unsupportedAlgorithm(algorithm.rawValue) }
    }

    private static func material(keyType: String, _ object: JSONObject) throws(JWKError) -> Material {
        switch keyType {
        case "RSA":
            try refusePrivate(object, ["d", "p", "q", "dp", "dq", "qi", "oth"])
            return .publicKey(try rsaKey(object))
        case "EC":
            try refusePrivate(object, ["d"])
            return .publicKey(try ecKey(object))
        case "OKP":
            try refusePrivate(object, ["d"])
            let curve = try requiredString(object, "crv")
            guard curve == "Ed25519" else { throw .unsupportedCurve(curve) }
            let raw = try bytes(object, "x")
            guard raw.count == 32 else { throw .invalidMember("x") }
            guard let key = PublicKey.ed25519(raw) else { throw .rejectedByOpenSSL }
            return .publicKey(key)
        case "oct":
            let secret = try bytes(object, "k")
            guard secret.count >= 32 else { throw .keyTooShort(bits: secret.count * 8) }
            guard let key = HMACKey(secret: secret) else { throw .rejectedByOpenSSL }
            return .secret(key)
        default:
            throw .unsupportedKeyType(keyType)
        }
    }

    private static func rsaKey(_ object: JSONObject) throws(JWKError) -> PublicKey {
        let modulus = Array(try bytes(object, "n").drop { $0 == 0 })
        let exponent = Array(try bytes(object, "e").drop { $0 == 0 })
        guard modulus.count * 8 >= 2048 else { throw .keyTooShort(bits: modulus.count * 8) }
        // A public exponent is odd and at least 3; anything else is not an RSA key.
        guard let last = exponent.last, last & 1 == 1, exponent.count > 1 || last > 1, exponent.count <= 8
        else { throw .invalidMember("e") }
        let info = DER.rsaPublicKeyInfo(modulus: modulus, exponent: exponent)
        guard let key = PublicKey.fromPublicKeyInfo(info, kind: .rsa) else { throw .rejectedByOpenSSL }
        guard key.bits >= 2048 else { throw .keyTooShort(bits: key.bits) }
        return key
    }

    private static func ecKey(_ object: JSONObject) throws(JWKError) -> PublicKey {
        let curve = try requiredString(object, "crv")
        let oid: [UInt8]
        let kind: PublicKey.Kind
        let length: Int
        switch curve {
        case "P-256": (oid, kind, length) = (DER.p256, .p256, 32)
        case "P-384": (oid, kind, length) = (DER.p384, .p384, 48)
        default: throw .unsupportedCurve(curve)
        }
        let x = try coordinate(object, "x", length: length)
        let y = try coordinate(object, "y", length: length)
        let info = DER.ecPublicKeyInfo(curve: oid, x: x, y: y)
        guard let key = PublicKey.fromPublicKeyInfo(info, kind: kind) else { throw .rejectedByOpenSSL }
        return key
    }

    /// An EC coordinate of exactly `length` bytes. RFC 7518 section 6.2.1.2 requires the full
    /// length, but PyJWT before 2.8 (Debian 12 ships 2.6) drops leading zero bytes, so one key
    /// in 256 it publishes is a byte short: shorter coordinates are left-padded with zeros
    /// (the point is still checked against the curve), longer ones refused.
    private static func coordinate(_ object: JSONObject, _ name: String, length: Int) throws(JWKError)
        -> [UInt8]
    {
        let value = try bytes(object, name)
        guard value.count <= length else { throw .invalidMember(name) }
        return [UInt8](repeating: 0, count: length - value.count) + value
    }

    private static func refusePrivate(_ object: JSONObject, _ members: [String]) throws(JWKError) {
        for member in members where object.contains(member) { throw .privateKeyMaterial(member) }
    }

    private static func optionalString(_ object: JSONObject, _ name: String) throws(JWKError) -> String? {
        guard let value = object[name] else { return nil }
        guard let text = value.stringValue else { throw .invalidMember(name) }
        return text
    }

    private static func requiredString(_ object: JSONObject, _ name: String) throws(JWKError) -> String {
        guard let text = try optionalString(object, name) else { throw .missingMember(name) }
        return text
    }

    private static func bytes(_ object: JSONObject, _ name: String) throws(JWKError) -> [UInt8] {
        let text = try requiredString(object, name)
        guard let decoded = Base64URL.decode(text.utf8), !decoded.isEmpty else { throw .invalidMember(name) }
        return decoded
    }
}
