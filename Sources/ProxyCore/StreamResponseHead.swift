public import HTTPCore

/// A response head for an HTTP/2 stream: what its HEADERS frame carries. The shell encodes it
/// with HPACK (`:status`, then the fields with their names lower-cased).
public struct StreamResponseHead: Sendable, Equatable {
    /// The status code (`:status`); a 1xx head is interim and another head follows.
    public var status: Int
    /// The fields, names as received, without connection-specific fields (RFC 9113 §8.2.2).
    public var headers: HeaderFields
    /// Whether the HEADERS frame ends the stream (END_STREAM): no body follows, and no
    /// `endClientStream` either. Never for a 1xx head.
    public var endsStream: Bool

    /// Creates a head.
    public init(status: Int, headers: HeaderFields = HeaderFields(), endsStream: Bool) {
        self.status = status
        self.headers = headers
        self.endsStream = endsStream
    }

    /// The interim `100 Continue` (RFC 9113 §8.1: a HEADERS frame with `:status` 100).
    public static let `continue` = StreamResponseHead(status: 100, endsStream: false)
}
