import HTTPCore

/// What a route accepts beyond RFC 7578, compiled once from its `multipart:` rules.
///
/// Every anomaly flag is repaired and logged by default; a flag in `rejected` makes the parser
/// refuse the body at the byte where the flag is raised (`MultipartError.Reason.rejectedAnomaly`),
/// before the closing delimiter can go upstream. Part headers other than
/// `Content-Disposition` and `Content-Type` are dropped (flagged `extra_part_header`, or
/// `content_transfer_encoding`) unless named in `keptHeaders`.
public struct MultipartPolicy: Equatable, Sendable {
    /// Flags that refuse the body (`anomalies: { FLAG: reject }`).
    public var rejected: MultipartAnomalies
    /// Part header names forwarded as received (`keep_part_headers`), compared without case.
    public var keptHeaders: [String]

    /// Creates a policy; the default accepts every flag and keeps no extra header.
    public init(rejecting rejected: MultipartAnomalies = [], keepingHeaders keptHeaders: [String] = []) {
        self.rejected = rejected
        self.keptHeaders = keptHeaders
    }

    /// Whether a part header named `name` is forwarded beside the ones FormGate writes.
    public func keeps(_ name: some Collection<UInt8>) -> Bool {
        keptHeaders.contains { asciiCaseInsensitiveEquals(name, $0.utf8) }
    }
}
