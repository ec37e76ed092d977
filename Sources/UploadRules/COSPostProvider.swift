import CCrypto
import HTTPCore

/// `inject: { cos_post: { … } }`: the fields of a Tencent COS POST Object form, signed for
/// this upload. The policy pins the bucket, the exact object key, `content-length-range
/// [0, limits.file_bytes]`, `q-sign-algorithm`, `q-ak` and `q-sign-time`, and the
/// `Content-Type` field when the part has one; its `expiration` is the end of `q-key-time`.
///
/// Field order: `key`, `policy`, `q-sign-algorithm` (`sha1`), `q-ak`, `q-key-time`,
/// `q-signature`, then `x-cos-security-token` and `Content-Type` when there are. COS stores
/// the object with the `Content-Type` form field and ignores the file part's own header, so
/// the part's final type (sniffed, declared or repaired) is sent as a field.
///
/// The signature (Tencent's POST Object document): SignKey = hex HMAC-SHA1(SecretKey,
/// KeyTime); StringToSign = hex SHA-1(policy JSON text); q-signature = hex HMAC-SHA1(SignKey,
/// StringToSign).
public struct COSPostProvider: TokenProvider {
    /// The SecretId (`q-ak`).
    public var secretID: String
    /// The SecretKey. Never logged.
    public var secretKey: String
    /// A temporary credential's token, sent as `x-cos-security-token`.
    public var securityToken: String?
    /// The bucket with its APPID (`examplebucket-1250000000`).
    public var bucket: String
    /// The object key (`uploads/{auth:sub}/{uuid}{ext}`).
    public var key: Template
    /// Seconds from now to the end of `q-key-time` and the policy's `expiration`.
    public var ttlSeconds: Int64

    /// How far `q-key-time` starts before now, as Tencent's SDKs sign: a store whose clock runs
    /// a little behind the proxy's still sees a key already valid.
    public static let clockSkewSeconds: Int64 = 60

    public init(
        secretID: String, secretKey: String, securityToken: String? = nil, bucket: String, key: Template,
        ttlSeconds: Int64
    ) {
        self.secretID = secretID
        self.secretKey = secretKey
        self.securityToken = securityToken
        self.bucket = bucket
        self.key = key
        self.ttlSeconds = ttlSeconds
    }

    public var kind: String { "cos_post" }

    /// Every field it may add (a client part of one of these names is dropped).
    public var fieldNames: [String] {
        [
            "key", "policy", "q-sign-algorithm", "q-ak", "q-key-time", "q-signature", "x-cos-security-token",
            "Content-Type",
        ]
    }

    /// Also the client's `x-cos-*` fields other than `x-cos-meta-*` (ACL, storage class,
    /// encryption, tagging) and the success redirect and status: COS does not require the
    /// policy to cover every field, as S3 does.
    public func reserves(_ lowercasedName: String) -> Bool {
        fieldNames.contains { $0.lowercased() == lowercasedName }
            || reservesStoreControl(
                lowercasedName, prefix: "x-cos-",
                others: ["success_action_redirect", "success_action_status"])
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
        let expires = context.now + ttlSeconds
        let keyTime = "\(context.now - Self.clockSkewSeconds);\(expires)"
        var conditions = [
            "{\"bucket\":\(jsonString(bucket))}", "{\"key\":\(jsonString(objectKey))}",
            "[\"content-length-range\",0,\(context.maxFileBytes)]",
            "{\"q-sign-algorithm\":\"sha1\"}", "{\"q-ak\":\(jsonString(secretID))}",
            "{\"q-sign-time\":\(jsonString(keyTime))}",
        ]
        if let contentType = context.contentType {
            conditions.append("{\"Content-Type\":\(jsonString(contentType))}")
        }
        let policy =
            "{\"expiration\":\(jsonString(PostPolicyTime.expiration(expires))),"
            + "\"conditions\":[\(conditions.joined(separator: ","))]}"
        var fields = [
            InjectedField(name: "key", value: objectKey),
            InjectedField(name: "policy", value: Base64.encoded(Array(policy.utf8))),
            InjectedField(name: "q-sign-algorithm", value: "sha1"),
            InjectedField(name: "q-ak", value: secretID),
            InjectedField(name: "q-key-time", value: keyTime),
            InjectedField(
                name: "q-signature",
                value: Self.postSignature(secretKey: secretKey, keyTime: keyTime, policy: policy)),
        ]
        if let securityToken {
            fields.append(InjectedField(name: "x-cos-security-token", value: securityToken))
        }
        if let contentType = context.contentType {
            fields.append(InjectedField(name: "Content-Type", value: contentType))
        }
        return fields
    }

    /// POST Object's `q-signature` for the policy JSON text (not its base64).
    public static func postSignature(secretKey: String, keyTime: String, policy: String) -> String {
        signature(secretKey: secretKey, keyTime: keyTime, stringToSign: sha1Hex(Array(policy.utf8)))
    }

    /// The COS chain every signature shares: hex HMAC-SHA1(hex HMAC-SHA1(secret, keyTime),
    /// stringToSign).
    public static func signature(secretKey: String, keyTime: String, stringToSign: String) -> String {
        let signKey = signKey(secretKey: secretKey, keyTime: keyTime)
        return Hex.encode(QiniuToken.hmacSHA1(key: Array(signKey.utf8), data: Array(stringToSign.utf8)))
    }

    /// SignKey: hex HMAC-SHA1(secret, keyTime).
    public static func signKey(secretKey: String, keyTime: String) -> String {
        Hex.encode(QiniuToken.hmacSHA1(key: Array(secretKey.utf8), data: Array(keyTime.utf8)))
    }

    /// Lower-case hex SHA-1 (OpenSSL).
    public static func sha1Hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 20)
        _ = bytes.withUnsafeBufferPointer { SHA1($0.baseAddress, $0.count, &digest) }
        return Hex.encode(digest)
    }
}
