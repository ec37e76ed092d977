/// What an `s3_post:` injection is configured with. Secrets stay out of `description`.
///
/// The object key: `key` is a template rendered per upload and sent as the `key` field. By
/// default the policy pins that exact key (`{"key": …}`). With `keyPrefix` (`key_prefix:`)
/// the policy instead allows any key that starts with the rendered prefix
/// (`["starts-with", "$key", …]`); the prefix must be the key template's beginning, piece for
/// piece (`uploads/{auth:sub}/` for `uploads/{auth:sub}/{uuid}{ext}`), and may not hold
/// `{uuid}` or `{random}`, so the rendered key always starts with the rendered prefix.
/// A key ending in S3's `${filename}` is not supported: FormGate names the object itself.
public struct S3PostSettings: Sendable, Equatable, CustomStringConvertible {
    public var accessKey: String
    public var secretKey: String
    /// Temporary credentials' session token (`x-amz-security-token`), or nil.
    public var sessionToken: String?
    /// The bucket's region (`us-east-1`); the signing scope's region.
    public var region: String
    public var bucket: String
    /// The object key template (`uploads/{auth:sub}/{uuid}{ext}`).
    public var key: Template
    /// When set, the policy allows keys that start with this rendered prefix.
    public var keyPrefix: Template?
    /// Seconds from signing to the policy's `expiration` (1 s to 7 days).
    public var ttlSeconds: Int64
    /// Extra policy conditions after the ones FormGate writes. A `contentLengthRange` here
    /// narrows the `[0, limits.file_bytes]` range instead of adding a second one.
    public var conditions: [S3PostCondition]

    public init(
        accessKey: String, secretKey: String, sessionToken: String? = nil, region: String, bucket: String,
        key: Template, keyPrefix: Template? = nil, ttlSeconds: Int64 = 3600,
        conditions: [S3PostCondition] = []
    ) {
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.sessionToken = sessionToken
        self.region = region
        self.bucket = bucket
        self.key = key
        self.keyPrefix = keyPrefix
        self.ttlSeconds = ttlSeconds
        self.conditions = conditions
    }

    /// The longest `ttlSeconds` allowed: 7 days, SigV4's longest presigned lifetime.
    public static let maxTTLSeconds: Int64 = 604_800

    /// Form fields FormGate writes itself; a configured condition may not name them.
    public static let reservedFields: Set<String> = [
        "bucket", "key", "policy", "x-amz-algorithm", "x-amz-credential", "x-amz-date",
        "x-amz-security-token", "x-amz-signature", "file",
    ]

    /// Why settings were refused, with the setting's name.
    public struct Invalid: Error, Equatable, Sendable, CustomStringConvertible {
        /// The setting (`region`, `key_prefix`, `conditions[2]`).
        public var setting: String
        public var message: String
        public var description: String { "\(setting): \(message)" }

        public init(setting: String, message: String) {
            self.setting = setting
            self.message = message
        }
    }

    public var description: String {
        "s3_post(access_key: \(accessKey), region: \(region), bucket: \(bucket), ttl: \(ttlSeconds)"
            + (sessionToken == nil ? ")" : ", session_token: <set>)")
    }

    /// Refuses empty credentials, a malformed region, a ttl outside 1 s…7 days, a key prefix
    /// that is not the key template's beginning, and conditions on reserved fields or with an
    /// impossible size range.
    public func validate() throws(Invalid) {
        func fail(_ setting: String, _ message: String) -> Invalid {
            Invalid(setting: setting, message: message)
        }
        if accessKey.isEmpty || accessKey.contains("/") {
            throw fail("access_key", "must be non-empty and hold no '/'")
        }
        if secretKey.isEmpty { throw fail("secret_key", "must not be empty") }
        if sessionToken?.isEmpty == true { throw fail("session_token", "must not be empty when set") }
        if !Self.isRegionName(region) {
            throw fail("region", "'\(region)' is not a region name (lower-case letters, digits, '-')")
        }
        if bucket.isEmpty || bucket.contains("/") {
            throw fail("bucket", "must be non-empty and hold no '/'")
        }
        if !(1...Self.maxTTLSeconds).contains(ttlSeconds) {
            throw fail("ttl", "\(ttlSeconds) s is outside 1...\(Self.maxTTLSeconds) s")
        }
        if let keyPrefix { try checkPrefix(keyPrefix) }
        for (index, condition) in conditions.enumerated() {
            if Self.reservedFields.contains(condition.field.lowercased()) {
                throw fail("conditions[\(index)]", "'\(condition.field)' is written by FormGate")
            }
            if case .contentLengthRange(let min, let max) = condition, min < 0 || min > max {
                throw fail("conditions[\(index)]", "content-length-range [\(min), \(max)] is empty")
            }
        }
    }

    private func checkPrefix(_ prefix: Template) throws(Invalid) {
        let refusal = Invalid(
            setting: "key_prefix", message: "must be the beginning of key, without {uuid} or {random}")
        var keyPieces = key.pieces[...]
        for (index, piece) in prefix.pieces.enumerated() {
            guard let keyPiece = keyPieces.popFirst() else { throw refusal }
            switch (piece, keyPiece) {
            case (.uuid, _), (.random, _): throw refusal
            case (.literal(let text), .literal(let keyText)):
                let isLast = index == prefix.pieces.count - 1
                guard isLast ? keyText.hasPrefix(text) : keyText == text else { throw refusal }
            default:
                guard piece == keyPiece else { throw refusal }
            }
        }
    }

    /// `us-east-1`, `eu-central-1`, `auto`: lower-case letters and digits in `-`-separated runs.
    static func isRegionName(_ name: String) -> Bool {
        let runs = name.split(separator: "-", omittingEmptySubsequences: false)
        return name.utf8.count <= 63
            && runs.allSatisfy { run in
                !run.isEmpty
                    && run.utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) }
            }
    }
}
