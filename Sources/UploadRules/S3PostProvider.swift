/// `inject: - { s3_post: { … }, before: file }`: the form fields of an S3 browser POST upload
/// signed with SigV4 (AWS "Browser-Based Uploads Using POST (AWS Signature Version 4)"), for
/// AWS S3 and every S3-compatible store.
///
/// Fields, in the order botocore's `generate_presigned_post` returns them (its `Fields` first,
/// then the ones it adds): `Content-Type` (when the part's type is known), the configured
/// exact conditions (`acl: private`: only that value passes the policy, so FormGate sends it
/// and the client need not), `key`, `x-amz-algorithm`, `x-amz-credential`, `x-amz-date`,
/// `x-amz-security-token` (temporary credentials only), `policy`, `x-amz-signature`.
///
/// The policy's conditions, in order: `bucket`; `key` exact, or `starts-with` the rendered
/// `keyPrefix`; `x-amz-algorithm`, `x-amz-credential`, `x-amz-date`, `x-amz-security-token`;
/// `content-length-range` [0, `limits.file_bytes`] (narrowed by a configured range); the
/// exact `Content-Type`; then the configured conditions.
public struct S3PostProvider: TokenProvider {
    public let settings: S3PostSettings

    /// Checks `settings` once, at configuration load (`S3PostSettings.validate()`).
    public init(settings: S3PostSettings) throws(S3PostSettings.Invalid) {
        try settings.validate()
        self.settings = settings
    }

    public var kind: String { "s3_post" }

    /// Every field it may add (a client part of one of these names is dropped).
    public var fieldNames: [String] {
        ["Content-Type"] + exactFields.map(\.name) + [
            "key", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-security-token", "policy",
            "x-amz-signature",
        ]
    }

    /// The configured exact conditions as the fields that satisfy them (`Content-Type` is the
    /// part's, never a configured one).
    var exactFields: [InjectedField] {
        settings.conditions.compactMap { condition in
            guard case .exact(let field, let value) = condition, field.lowercased() != "content-type" else {
                return nil
            }
            return InjectedField(name: field, value: value)
        }
    }

    /// The store reads only the fields before the file.
    public var needsFileLast: Bool { true }

    /// The store refuses chunked bodies (411).
    public var needsContentLength: Bool { true }

    public var templates: [Template] { [settings.key] + (settings.keyPrefix.map { [$0] } ?? []) }

    public func fields(for context: ProviderContext, random: inout some RandomNumberGenerator)
        -> [InjectedField]
    {
        fields(
            key: settings.key.render(context.values, random: &random),
            keyPrefix: settings.keyPrefix?.render(context.values, random: &random),
            contentType: context.contentType, now: context.now, maxFileBytes: context.maxFileBytes)
    }

    /// The fields for an already rendered key (and prefix, when the policy allows any key
    /// that starts with it).
    public func fields(key: String, keyPrefix: String?, contentType: String?, now: Int64, maxFileBytes: Int64)
        -> [InjectedField]
    {
        let contentType = contentType.flatMap { $0.isEmpty ? nil : $0 }
        let signer = SigV4.aws(region: settings.region)
        let date = PostPolicyTime.date(now)
        let timestamp = PostPolicyTime.dateTime(now)
        let credential = signer.credential(accessKey: settings.accessKey, date: date)
        let policy = self.policy(
            key: key, keyPrefix: keyPrefix, credential: credential, timestamp: timestamp,
            contentType: contentType, now: now, maxFileBytes: maxFileBytes
        ).base64
        var fields: [InjectedField] = []
        if let contentType { fields.append(InjectedField(name: "Content-Type", value: contentType)) }
        fields += exactFields
        fields.append(InjectedField(name: "key", value: key))
        fields.append(InjectedField(name: "x-amz-algorithm", value: signer.algorithm))
        fields.append(InjectedField(name: "x-amz-credential", value: credential))
        fields.append(InjectedField(name: "x-amz-date", value: timestamp))
        if let token = settings.sessionToken {
            fields.append(InjectedField(name: "x-amz-security-token", value: token))
        }
        fields.append(InjectedField(name: "policy", value: policy))
        fields.append(
            InjectedField(
                name: "x-amz-signature",
                value: signer.signature(secret: settings.secretKey, date: date, stringToSign: policy)))
        return fields
    }

    private func policy(
        key: String, keyPrefix: String?, credential: String, timestamp: String, contentType: String?,
        now: Int64, maxFileBytes: Int64
    ) -> S3PostPolicy {
        var conditions: [S3PostCondition] = [.exact(field: "bucket", value: settings.bucket)]
        if let keyPrefix {
            conditions.append(.startsWith(field: "key", prefix: keyPrefix))
        } else {
            conditions.append(.exact(field: "key", value: key))
        }
        conditions.append(.exact(field: "x-amz-algorithm", value: "AWS4-HMAC-SHA256"))
        conditions.append(.exact(field: "x-amz-credential", value: credential))
        conditions.append(.exact(field: "x-amz-date", value: timestamp))
        if let token = settings.sessionToken {
            conditions.append(.exact(field: "x-amz-security-token", value: token))
        }
        var sizes = (min: Int64(0), max: maxFileBytes)
        for case .contentLengthRange(let min, let max) in settings.conditions {
            sizes = (Swift.max(sizes.min, min), Swift.min(sizes.max, max))
        }
        conditions.append(.contentLengthRange(min: sizes.min, max: sizes.max))
        if let contentType { conditions.append(.exact(field: "Content-Type", value: contentType)) }
        for condition in settings.conditions {
            if case .contentLengthRange = condition { continue }
            conditions.append(condition)
        }
        return S3PostPolicy(expiration: now + settings.ttlSeconds, conditions: conditions)
    }
}
