import HTTPCore

/// `inject: { oss_post: { … } }`: the fields of an Aliyun OSS PostObject form, signed for
/// this upload with signature V1 (`OSSAccessKeyId`, `Signature`) or V4
/// (`x-oss-signature-version: OSS4-HMAC-SHA256`, `x-oss-credential`, `x-oss-date`,
/// `x-oss-signature`). The object key is rendered once and goes both into the `key` field and
/// into the policy as an exact condition; the policy also pins the bucket and
/// `content-length-range [0, limits.file_bytes]`.
///
/// Field order, V1: `key`, `OSSAccessKeyId`, `policy`, `Signature`, then
/// `x-oss-security-token` and `success_action_status` when set. V4: `key`, `policy`,
/// `x-oss-signature-version`, `x-oss-credential`, `x-oss-date`, `x-oss-signature`, then the
/// same two optional fields. OSS reads form fields only before the file part.
public struct OSSPostProvider: TokenProvider {
    /// Which PostObject signature the form carries.
    public enum Version: String, Sendable, Equatable {
        /// `Signature` = base64 HMAC-SHA1(secret, base64 policy).
        case v1
        /// `x-oss-signature` = hex HMAC-SHA256 of the base64 policy with the V4 signing key.
        case v4
    }

    /// The V4 algorithm name, the `x-oss-signature-version` field and policy condition.
    public static let v4Algorithm = "OSS4-HMAC-SHA256"

    public var version: Version
    /// The AccessKey ID (`OSSAccessKeyId`, or the first part of `x-oss-credential`).
    public var accessKey: String
    /// The AccessKey secret. Never logged.
    public var secretKey: String
    /// An STS token: sent as `x-oss-security-token` (and, with V4, pinned by the policy).
    public var securityToken: String?
    /// The region ID as the V4 credential scope spells it (`cn-hangzhou`). The endpoint's
    /// spelling, `oss-cn-hangzhou`, is accepted and loses its `oss-` (as ali-oss's
    /// `getStandardRegion` does): no region ID starts with it. Unused by V1.
    public var region: String
    public var bucket: String
    /// The object key (`uploads/{auth:sub}/{uuid}{ext}`).
    public var key: Template
    /// Seconds from now to the policy's `expiration`.
    public var ttlSeconds: Int64
    /// `success_action_status` (`200`, `201` or `204`), sent and pinned by the policy when set.
    public var successActionStatus: String?

    public init(
        version: Version, accessKey: String, secretKey: String, securityToken: String? = nil,
        region: String, bucket: String, key: Template, ttlSeconds: Int64, successActionStatus: String? = nil
    ) {
        self.version = version
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.securityToken = securityToken
        self.region = region.hasPrefix("oss-") ? String(region.dropFirst(4)) : region
        self.bucket = bucket
        self.key = key
        self.ttlSeconds = ttlSeconds
        self.successActionStatus = successActionStatus
    }

    public var kind: String { "oss_post" }

    /// Every field it may add, and `x-oss-content-type` and `Content-Type`, which OSS would
    /// store as the object's type over the file part's (the final, sniffed one): a client part
    /// of one of these names is dropped.
    public var fieldNames: [String] {
        [
            "key", "OSSAccessKeyId", "policy", "Signature", "x-oss-signature-version", "x-oss-credential",
            "x-oss-date", "x-oss-signature", "x-oss-security-token", "success_action_status",
            "x-oss-content-type", "Content-Type",
        ]
    }

    /// Also the client's `x-oss-*` fields other than `x-oss-meta-*` (ACL, storage class,
    /// encryption, forbid-overwrite, tagging), `callback`, `callback-var` and the success
    /// redirect and status: OSS does not require the policy to cover every field, as S3 does.
    public func reserves(_ lowercasedName: String) -> Bool {
        fieldNames.contains { $0.lowercased() == lowercasedName }
            || reservesStoreControl(
                lowercasedName, prefix: "x-oss-",
                others: ["callback", "callback-var", "success_action_redirect", "success_action_status"])
    }

    /// The store reads only the fields before the file.
    public var needsFileLast: Bool { true }

    /// The store refuses chunked bodies (411).
    public var needsContentLength: Bool { true }

    public var templates: [Template] { [key] }

    public func fields(for context: ProviderContext, random: inout some RandomNumberGenerator)
        -> [InjectedField]
    {
        let objectKey = key.render(context.values, random: &random)
        let conditions = [
            "{\"bucket\":\(jsonString(bucket))}", "{\"key\":\(jsonString(objectKey))}",
            "[\"content-length-range\",0,\(context.maxFileBytes)]",
        ]
        var fields = [InjectedField(name: "key", value: objectKey)]
        switch version {
        case .v1: fields += v1Fields(conditions: conditions, now: context.now)
        case .v4: fields += v4Fields(conditions: conditions, now: context.now)
        }
        if let securityToken {
            fields.append(InjectedField(name: "x-oss-security-token", value: securityToken))
        }
        if let successActionStatus {
            fields.append(InjectedField(name: "success_action_status", value: successActionStatus))
        }
        return fields
    }

    /// `OSSAccessKeyId`, `policy`, `Signature`.
    private func v1Fields(conditions: [String], now: Int64) -> [InjectedField] {
        let policy = Self.encodedPolicy(
            expiration: now + ttlSeconds, conditions: conditions + optionalConditions(v4: false))
        return [
            InjectedField(name: "OSSAccessKeyId", value: accessKey),
            InjectedField(name: "policy", value: policy),
            InjectedField(name: "Signature", value: Self.v1Signature(secretKey: secretKey, policy: policy)),
        ]
    }

    /// `policy`, `x-oss-signature-version`, `x-oss-credential`, `x-oss-date`, `x-oss-signature`;
    /// the policy pins the three signing fields.
    private func v4Fields(conditions: [String], now: Int64) -> [InjectedField] {
        let date = PostPolicyTime.date(now)
        let dateTime = PostPolicyTime.dateTime(now)
        let credential = Self.v4Credential(accessKey: accessKey, date: date, region: region)
        let signing = [
            "{\"x-oss-signature-version\":\(jsonString(Self.v4Algorithm))}",
            "{\"x-oss-credential\":\(jsonString(credential))}",
            "{\"x-oss-date\":\(jsonString(dateTime))}",
        ]
        let policy = Self.encodedPolicy(
            expiration: now + ttlSeconds, conditions: conditions + signing + optionalConditions(v4: true))
        return [
            InjectedField(name: "policy", value: policy),
            InjectedField(name: "x-oss-signature-version", value: Self.v4Algorithm),
            InjectedField(name: "x-oss-credential", value: credential),
            InjectedField(name: "x-oss-date", value: dateTime),
            InjectedField(
                name: "x-oss-signature",
                value: Self.v4Signature(secretKey: secretKey, date: date, region: region, policy: policy)),
        ]
    }

    /// The security token (V4 only) and `success_action_status`, when set.
    private func optionalConditions(v4: Bool) -> [String] {
        var conditions: [String] = []
        if v4, let securityToken {
            conditions.append("{\"x-oss-security-token\":\(jsonString(securityToken))}")
        }
        if let successActionStatus {
            conditions.append("{\"success_action_status\":\(jsonString(successActionStatus))}")
        }
        return conditions
    }

    /// The base64 of `{"expiration":…,"conditions":[…]}`; `conditions` are JSON already.
    static func encodedPolicy(expiration: Int64, conditions: [String]) -> String {
        let json =
            "{\"expiration\":\(jsonString(PostPolicyTime.expiration(expiration))),"
            + "\"conditions\":[\(conditions.joined(separator: ","))]}"
        return Base64.encoded(Array(json.utf8))
    }

    /// V1: base64 HMAC-SHA1(secret, `policy`), `policy` being the base64 policy text.
    public static func v1Signature(secretKey: String, policy: String) -> String {
        Base64.encoded(QiniuToken.hmacSHA1(key: Array(secretKey.utf8), data: Array(policy.utf8)))
    }

    /// V4: `AK/yyyymmdd/region/oss/aliyun_v4_request`.
    public static func v4Credential(accessKey: String, date: String, region: String) -> String {
        SigV4.ossV4(region: region).credential(accessKey: accessKey, date: date)
    }

    /// V4: hex HMAC-SHA256(signing key, `policy`), the signing key being SigV4's chain from
    /// `"aliyun_v4" + secret` over the date (`yyyymmdd`), the region, `oss` and
    /// `aliyun_v4_request`.
    public static func v4Signature(secretKey: String, date: String, region: String, policy: String) -> String
    {
        SigV4.ossV4(region: region).signature(secret: secretKey, date: date, stringToSign: policy)
    }
}
