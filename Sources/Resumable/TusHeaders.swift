import HTTPCore
/// Values of tus 1.0.0 request headers, parsed strictly: anything that could be read two ways
/// is refused (a sign, a leading `+`, spaces inside a number, an overflow).
public enum TusHeaders {
    /// The protocol version FormGate speaks.
    public static let version = "1.0.0"
    /// The extensions FormGate implements, as `Tus-Extension` lists them.
    public static let extensions = [
        "creation", "creation-with-upload", "creation-defer-length", "expiration", "checksum",
        "termination", "concatenation",
    ]
    /// The checksum algorithms, as `Tus-Checksum-Algorithm` lists them.
    public static let checksumAlgorithms: [ChecksumAlgorithm] = [.sha1, .sha256, .md5]
    /// The media type of a PATCH body (and of a creation-with-upload body).
    public static let offsetOctetStream = "application/offset+octet-stream"

    /// A non-negative decimal integer of at most 18 digits (`Upload-Offset`, `Upload-Length`):
    /// nil for an empty value, any non-digit, or more digits (past what an `Int64` holds
    /// whatever the digits).
    public static func nonNegativeInteger(_ value: some Collection<UInt8>) -> Int64? {
        guard !value.isEmpty, value.count <= 18 else { return nil }
        var result: Int64 = 0
        for byte in value {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            result = result * 10 + Int64(byte - 0x30)
        }
        return result
    }

    /// `Upload-Concat`: `partial`, or `final;` followed by the partial uploads' URLs, separated
    /// by spaces.
    public enum Concat: Equatable, Sendable {
        case partial
        case final([String])
    }

    /// Parses `Upload-Concat`; nil for anything but the two forms (a `final` with no URL
    /// included).
    public static func concat(_ value: String) -> Concat? {
        if value == "partial" { return .partial }
        guard value.hasPrefix("final;") else { return nil }
        let urls = value.dropFirst("final;".count).split(separator: " ").map(String.init)
        guard !urls.isEmpty else { return nil }
        return .final(urls)
    }

    /// A checksum algorithm of the checksum extension.
    public enum ChecksumAlgorithm: String, Sendable, CaseIterable {
        case sha1, sha256, md5

        /// The digest's length in bytes.
        public var digestLength: Int {
            switch self {
            case .sha1: 20
            case .sha256: 32
            case .md5: 16
            }
        }
    }

    /// Why an `Upload-Checksum` was refused.
    public enum ChecksumFailure: Error, Equatable, Sendable {
        /// Not `algorithm base64`, or a digest of the wrong length: 400.
        case malformed
        /// An algorithm FormGate does not support: 400.
        case unsupportedAlgorithm(String)
    }

    /// Parses `Upload-Checksum: <algorithm> <Base64 digest>`.
    public static func checksum(_ value: String) throws(ChecksumFailure) -> (ChecksumAlgorithm, [UInt8]) {
        let parts = value.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty else { throw .malformed }
        guard let algorithm = ChecksumAlgorithm(rawValue: String(parts[0])) else {
            throw .unsupportedAlgorithm(String(parts[0]))
        }
        guard let digest = Base64.decoded(parts[1].utf8), digest.count == algorithm.digestLength else {
            throw .malformed
        }
        return (algorithm, digest)
    }
}
