/// `tus.store: { s3: { … } }`: an S3-compatible bucket that holds a route's uploads, so that
/// every replica sees the same ones (DESIGN.md, "Many replicas").
///
/// The secret key and the session token are never part of `description`.
public struct ObjectStoreSettings: Sendable, Equatable, CustomStringConvertible {
    /// `http` or `https`.
    public var scheme: String
    /// The endpoint's host (a name, an IPv4 address, or an IPv6 address without brackets).
    public var host: String
    public var port: Int
    public var bucket: String
    public var region: String
    /// Prepended to every key (`tus/`); may be empty.
    public var prefix: String
    public var accessKey: String
    /// Never logged.
    public var secretKey: String
    /// `x-amz-security-token` (temporary credentials); never logged.
    public var sessionToken: String?
    /// The size of every multipart part but the last (at least 5 MiB, S3's minimum).
    public var partSize: Int
    /// How long an upload's Redis lock lasts unless its holder renews it (milliseconds): how
    /// long a replica killed mid-PATCH keeps others off the upload.
    public var lockMilliseconds: Int64 = ObjectStoreSettings.defaultLockMilliseconds

    /// S3's smallest part but the last.
    public static let minimumPartSize = 5 << 20
    public static let defaultPartSize = 8 << 20
    public static let defaultLockMilliseconds: Int64 = 30_000

    public init(
        scheme: String, host: String, port: Int, bucket: String, region: String, prefix: String,
        accessKey: String, secretKey: String, sessionToken: String? = nil,
        partSize: Int = ObjectStoreSettings.defaultPartSize
    ) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.bucket = bucket
        self.region = region
        self.prefix = prefix
        self.accessKey = accessKey
        self.secretKey = secretKey
        self.sessionToken = sessionToken
        self.partSize = partSize
    }

    /// The `Host` header's value: the port only when it is not the scheme's default.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        let defaultPort = scheme == "https" ? 443 : 80
        return port == defaultPort ? name : "\(name):\(port)"
    }

    /// What the store is called in the log and as the key of its service: endpoint, bucket and
    /// prefix (never a credential).
    public var description: String { "s3:\(scheme)://\(hostHeader)/\(bucket)/\(prefix)" }

    /// Parses `http[s]://host[:port]` (nothing after the authority but an optional `/`); nil
    /// when it is not one.
    public static func endpoint(_ text: String) -> (scheme: String, host: String, port: Int)? {
        let scheme: String
        var rest: Substring
        if text.hasPrefix("https://") {
            scheme = "https"
            rest = text.dropFirst("https://".count)
        } else if text.hasPrefix("http://") {
            scheme = "http"
            rest = text.dropFirst("http://".count)
        } else {
            return nil
        }
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        var port = scheme == "https" ? 443 : 80
        var host = rest
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let number = Int(after.dropFirst()) else { return nil }
                port = number
            }
        } else if let colon = rest.lastIndex(of: ":") {
            host = rest[..<colon]
            guard let number = Int(rest[rest.index(after: colon)...]) else { return nil }
            port = number
        }
        guard (1...65_535).contains(port), !host.isEmpty,
            host.utf8.allSatisfy({
                $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "@")
            })
        else { return nil }
        return (scheme, String(host), port)
    }
}
