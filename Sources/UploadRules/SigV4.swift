import CCrypto
import HTTPCore

/// The AWS Signature Version 4 key chain and the strings around it, pure (HMAC-SHA256 from
/// OpenSSL; dates as `PostPolicyTime` writes them, no clock, no locale).
///
/// The signing key is `HMAC(HMAC(HMAC(HMAC(keyPrefix + secret, yyyymmdd), region), service),
/// terminator)`; a POST policy's signature is the lower-case hex HMAC-SHA256 of the base64
/// policy under that key. S3 uses `AWS4` / `aws4_request`; Aliyun OSS V4 the same chain with
/// `aliyun_v4` / `aliyun_v4_request` and service `oss` (`SigV4.ossV4(region:)`).
public struct SigV4: Sendable, Equatable {
    /// The algorithm's name as the form carries it (`AWS4-HMAC-SHA256`, `OSS4-HMAC-SHA256`).
    public var algorithm: String
    /// Prepended to the secret for the first HMAC (`AWS4`, `aliyun_v4`).
    public var keyPrefix: String
    /// The last element of the scope and of the key chain (`aws4_request`, `aliyun_v4_request`).
    public var terminator: String
    /// The region of the scope (`us-east-1`, `cn-hangzhou`).
    public var region: String
    /// The service of the scope (`s3`, `oss`).
    public var service: String

    public init(algorithm: String, keyPrefix: String, terminator: String, region: String, service: String) {
        self.algorithm = algorithm
        self.keyPrefix = keyPrefix
        self.terminator = terminator
        self.region = region
        self.service = service
    }

    /// AWS's own parameters: `AWS4-HMAC-SHA256`, `AWS4`, `aws4_request`, service `s3` by default.
    public static func aws(region: String, service: String = "s3") -> SigV4 {
        SigV4(
            algorithm: "AWS4-HMAC-SHA256", keyPrefix: "AWS4", terminator: "aws4_request", region: region,
            service: service)
    }

    /// Aliyun OSS V4: `OSS4-HMAC-SHA256`, `aliyun_v4`, `aliyun_v4_request`, service `oss`.
    public static func ossV4(region: String) -> SigV4 {
        SigV4(
            algorithm: "OSS4-HMAC-SHA256", keyPrefix: "aliyun_v4", terminator: "aliyun_v4_request",
            region: region, service: "oss")
    }

    /// `yyyymmdd/region/service/terminator` for the day `date` (`yyyymmdd`) names.
    public func scope(date: String) -> String {
        date + "/" + region + "/" + service + "/" + terminator
    }

    /// `accessKey/yyyymmdd/region/service/terminator`: the `x-amz-credential` value.
    public func credential(accessKey: String, date: String) -> String {
        accessKey + "/" + scope(date: date)
    }

    /// The derived signing key for `secret` on the day `date` (`yyyymmdd`).
    public func signingKey(secret: String, date: String) -> [UInt8] {
        var key = Array((keyPrefix + secret).utf8)
        for element in [date, region, service, terminator] {
            key = Self.hmacSHA256(key: key, data: Array(element.utf8))
        }
        return key
    }

    /// The lower-case hex HMAC-SHA256 of `stringToSign` (for a POST policy: its base64 text)
    /// under the signing key of `secret` and `date` (`yyyymmdd`).
    public func signature(secret: String, date: String, stringToSign: String) -> String {
        Hex.encode(
            Self.hmacSHA256(key: signingKey(secret: secret, date: date), data: Array(stringToSign.utf8)))
    }

    /// HMAC-SHA256 (OpenSSL): 32 bytes.
    public static func hmacSHA256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let result = key.withUnsafeBytes { key in
            data.withUnsafeBytes { data in
                HMAC(
                    EVP_sha256(), key.baseAddress, Int32(key.count),
                    data.baseAddress?.assumingMemoryBound(to: UInt8.self), data.count, &out, &length)
            }
        }
        precondition(result != nil && length == 32, "OpenSSL HMAC-SHA256 failed")
        return out
    }

}
