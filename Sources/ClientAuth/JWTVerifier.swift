/// Verifies JWS compact-serialised JWTs (RFC 7515, RFC 7519) against configured keys and
/// claim rules; built once at configuration load and shared by every worker thread.
///
/// Order: size, three base64url segments, the header (`alg`, `kid`, `typ`, `crit`), the key,
/// the signature over the first two segments, then the claims set. Claims are not looked at
/// before the signature verifies. Header members that point elsewhere for keys (`jku`,
/// `x5u`, `jwk`, `x5c`) are ignored: keys come only from the configuration.
///
/// Key selection: when the token has a `kid` and some configured key has a `kid`, the `kid`
/// picks the key (`unknown_key` if none has it; `unsupported_algorithm` if that key is not for
/// the token's `alg`). Otherwise the key is the one key that fits `alg`: none is
/// `unsupported_algorithm`, several is `unknown_key`.
public struct JWTVerifier: Sendable {
    /// The keys tokens may be signed with.
    public let keys: [JWK]
    /// The claim rules and limits.
    public let settings: Settings
    /// Whether any key has a `kid` (so a token's `kid` must match one).
    private let keysHaveIDs: Bool
    private let parser: JSONParser

    /// Creates a verifier for `keys` (a loaded JWKS, or a shared secret's one key).
    public init(keys: JWKSet, settings: Settings = Settings()) {
        self.keys = keys.keys
        self.settings = settings
        keysHaveIDs = keys.keys.contains { $0.keyID != nil }
        parser = JSONParser(maximumBytes: settings.maximumTokenBytes, maximumDepth: 16)
    }

    /// Verifies `token` (the bytes of the compact serialisation, nothing around them) at
    /// `now` (Unix seconds): the verified token, or the reason it is refused.
    public func verify(_ token: some Collection<UInt8>, now: Int64) -> Result<VerifiedToken, JWTRejection> {
        guard token.count <= settings.maximumTokenBytes else { return .failure(.tooLarge) }
        if let result = token.withContiguousStorageIfAvailable({ verify(buffer: $0, now: now) }) {
            return result
        }
        return Array(token).withUnsafeBufferPointer { verify(buffer: $0, now: now) }
    }

    private func verify(buffer token: UnsafeBufferPointer<UInt8>, now: Int64) -> Result<
        VerifiedToken, JWTRejection
    > {
        let dot = UInt8(ascii: ".")
        guard let firstDot = token.firstIndex(of: dot),
            let secondDot = token[(firstDot + 1)...].firstIndex(of: dot),
            !token[(secondDot + 1)...].contains(dot), firstDot > 0, secondDot > firstDot + 1
        else { return .failure(.malformed) }
        let header = UnsafeBufferPointer(rebasing: token[0..<firstDot])
        let payload = UnsafeBufferPointer(rebasing: token[(firstDot + 1)..<secondDot])
        let signature = UnsafeBufferPointer(rebasing: token[(secondDot + 1)...])
        let signingInput = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: token[0..<secondDot]))
        // One scratch buffer on the stack holds each decoded segment in turn.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: token.count) { scratch in
            Result { () throws(JWTRejection) -> VerifiedToken in
                let (algorithm, key) = try selectKey(try decodeObject(header, into: scratch))
                // After the header, so that `alg: none` with its empty signature is named
                // `unsupported_algorithm`; for any real algorithm an empty one is malformed.
                guard !signature.isEmpty else { throw .malformed }
                let signatureBytes = try decode(signature, into: scratch)
                guard
                    key.verify(
                        algorithm, input: signingInput, signature: UnsafeRawBufferPointer(signatureBytes))
                else { throw .badSignature }
                let claims = try decodeObject(payload, into: scratch)
                let subject = try checkClaims(claims, now: now)
                return VerifiedToken(subject: subject, claims: claims, algorithm: algorithm, keyID: key.keyID)
            }
        }
    }

    /// Decodes one base64url segment into the front of `scratch`.
    private func decode(
        _ segment: UnsafeBufferPointer<UInt8>, into scratch: UnsafeMutableBufferPointer<UInt8>
    )
        throws(JWTRejection) -> UnsafeBufferPointer<UInt8>
    {
        guard let count = Base64URL.decode(segment, into: scratch) else { throw .malformed }
        return UnsafeBufferPointer(rebasing: scratch[0..<count])
    }

    /// Decodes a segment that must be a JSON object (the header, the claims set).
    private func decodeObject(
        _ segment: UnsafeBufferPointer<UInt8>, into scratch: UnsafeMutableBufferPointer<UInt8>
    ) throws(JWTRejection) -> JSONObject {
        let bytes = try decode(segment, into: scratch)
        guard let object = try? parser.parse(bytes).objectValue else { throw .malformed }
        return object
    }

    /// Reads the header's `alg`, `kid`, `typ` and `crit`, and picks the key.
    private func selectKey(_ header: JSONObject) throws(JWTRejection) -> (JWSAlgorithm, JWK) {
        var name: String?
        var keyID: String?
        for member in header.members {
            switch ClaimName(member.name) {
            case .alg:
                guard let text = member.value.stringValue else { throw .malformed }
                name = text
            case .kid:
                guard let text = member.value.stringValue else { throw .malformed }
                keyID = text
            case .typ:
                guard let text = member.value.stringValue, Self.isJWTType(text) else { throw .malformed }
            case .crit:
                // No extension is understood, so any critical one makes the token unusable.
                throw .malformed
            default:
                continue
            }
        }
        guard let name else { throw .malformed }
        guard let algorithm = JWSAlgorithm(name: name) else { throw .unsupportedAlgorithm }
        if let keyID, keysHaveIDs {
            guard let key = keys.first(where: { $0.keyID == keyID }) else { throw .unknownKey }
            guard key.fits(algorithm) else { throw .unsupportedAlgorithm }
            return (algorithm, key)
        }
        var chosen: JWK?
        for key in keys where key.fits(algorithm) {
            guard chosen == nil else { throw .unknownKey }
            chosen = key
        }
        guard let chosen else { throw .unsupportedAlgorithm }
        return (algorithm, chosen)
    }

    /// `typ` (RFC 7519 section 5.1): `JWT`, or the media type `application/jwt`, any case.
    private static func isJWTType(_ text: String) -> Bool {
        var lowered = text.utf8.map { $0 | ($0 &- 0x41 < 26 ? 0x20 : 0) }
        if lowered.starts(with: "application/".utf8) { lowered.removeFirst(12) }
        return lowered.elementsEqual("jwt".utf8)
    }
}
