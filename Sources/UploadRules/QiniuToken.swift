import CCrypto
import HTTPCore

/// A Qiniu upload token: `access_key:urlsafe_base64(HMAC-SHA1(secret_key, encodedPolicy)):encodedPolicy`
/// where `encodedPolicy = urlsafe_base64(JSON policy)`, padding kept.
public enum QiniuToken {
    /// Signs `data` (already the encoded policy, or any bytes) with `secretKey`.
    public static func sign(accessKey: String, secretKey: String, encodedData: String) -> String {
        let signature = hmacSHA1(key: Array(secretKey.utf8), data: Array(encodedData.utf8))
        return accessKey + ":" + Base64.urlSafeEncoded(signature) + ":" + encodedData
    }

    /// A token for a policy given as JSON text.
    public static func token(accessKey: String, secretKey: String, policyJSON: String) -> String {
        sign(
            accessKey: accessKey, secretKey: secretKey,
            encodedData: Base64.urlSafeEncoded(Array(policyJSON.utf8)))
    }

    /// The policy JSON: `scope`, `deadline`, then the extra fields in the order given. Extra
    /// values are JSON literals already (strings quoted, numbers bare).
    public static func policyJSON(scope: String, deadline: Int64, extra: [(String, String)]) -> String {
        var members = ["\"scope\":\(jsonString(scope))", "\"deadline\":\(deadline)"]
        for (key, value) in extra { members.append("\(jsonString(key)):\(value)") }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// HMAC-SHA1 (OpenSSL).
    public static func hmacSHA1(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        _ = key.withUnsafeBytes { key in
            data.withUnsafeBytes { data in
                HMAC(
                    EVP_sha1(), key.baseAddress, Int32(key.count),
                    data.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    data.count, &out, &length)
            }
        }
        return Array(out.prefix(Int(length)))
    }
}
