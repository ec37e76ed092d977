/// The transport an exchange's request came over, which decides what its answer looks like:
/// HTTP/1.1 bytes on a connection, or HEADERS and DATA on an HTTP/2 stream.
public enum ClientProtocol: Sendable, Equatable {
    /// HTTP/1.0 or HTTP/1.1 on its own connection (keep-alive, `Connection: close`, lingering).
    case http1
    /// One stream of an HTTP/2 connection (RFC 9113): the response goes as `respondClient`,
    /// body bytes and `endClientStream`; connection management belongs to the transport.
    case http2(streamID: Int32)

    /// Whether this is an HTTP/2 stream.
    public var isHTTP2: Bool { streamID != nil }

    /// The stream's id, for an HTTP/2 stream.
    public var streamID: Int32? {
        if case .http2(let id) = self { return id }
        return nil
    }

    /// The access log's `protocol` value.
    public var logName: String { isHTTP2 ? "h2" : "http/1.1" }
}
