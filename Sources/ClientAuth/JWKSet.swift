/// The verification keys of a JWKS document (RFC 7517 section 5): every usable key of its
/// `keys` array, and the reason each other key was skipped.
///
/// A key that is odd (unknown `kty`, private members, missing members, wrong lengths, weak)
/// is skipped, not fatal, so one exotic key in a provider's set does not lock every client
/// out; a set with no usable key at all is an error.
public struct JWKSet: Sendable {
    /// A member of `keys` that was not loaded, and why.
    public struct SkippedKey: Equatable, Sendable, CustomStringConvertible {
        /// Its position in the `keys` array (from 0).
        public var index: Int
        /// Its `kid`, if it had a string one.
        public var keyID: String?
        /// Why it was skipped.
        public var reason: JWKError

        /// Creates a record of a skipped key.
        public init(index: Int, keyID: String?, reason: JWKError) {
            self.index = index
            self.keyID = keyID
            self.reason = reason
        }

        public var description: String {
            "key \(index)" + (keyID.map { " (kid \"\($0)\")" } ?? "") + ": \(reason)"
        }
    }

    /// The usable keys, in document order.
    public let keys: [JWK]
    /// The keys that were skipped, in document order.
    public let skipped: [SkippedKey]

    /// A set of keys made by the caller (a shared secret, tests).
    public init(keys: [JWK]) {
        self.keys = keys
        skipped = []
    }

    /// Loads a JWKS document: a JSON object whose `keys` member is an array of JWKs.
    ///
    /// Throws when the document is not JSON, has no `keys` array, or yields no usable key.
    /// Two keys with the same `kid` are refused (the second is skipped), since a `kid` must
    /// pick one key.
    public init(json: some Collection<UInt8>, maximumBytes: Int = 1 << 20) throws(JWKSetError) {
        let document: JSONValue
        do throws(JSONError) {
            document = try JSONParser(maximumBytes: maximumBytes, maximumDepth: 16).parse(json)
        } catch {
            throw .invalidJSON(error)
        }
        guard let list = document.objectValue?["keys"]?.arrayValue else { throw .noKeysArray }
        var keys: [JWK] = []
        var skipped: [SkippedKey] = []
        for (index, element) in list.enumerated() {
            let keyID = element.objectValue?["kid"]?.stringValue
            do throws(JWKError) {
                let key = try JWK(json: element)
                if let keyID, keys.contains(where: { $0.keyID == keyID }) { throw .duplicateKeyID(keyID) }
                keys.append(key)
            } catch {
                skipped.append(SkippedKey(index: index, keyID: keyID, reason: error))
            }
        }
        guard !keys.isEmpty else { throw .noUsableKey(skipped) }
        self.keys = keys
        self.skipped = skipped
    }

    /// Reads and loads a JWKS file (at most `maximumBytes`; plain `read(2)`, at
    /// configuration load and reload, never on the request path).
    public init(contentsOfFile path: String, maximumBytes: Int = 1 << 20) throws(JWKSetError) {
        guard let bytes = ConfigurationFile.contents(of: path, maximumBytes: maximumBytes) else {
            throw .unreadable(path)
        }
        try self.init(json: bytes, maximumBytes: maximumBytes)
    }
}
