/// An HTTP/2 error code (RFC 9113 §7), as carried by RST_STREAM and GOAWAY.
///
/// Codes the RFC does not define are kept as received (an endpoint must treat them as
/// `internalError` for its own decisions, but a log should show the number the peer sent).
public struct HTTP2ErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The 32-bit code on the wire.
    public var rawValue: UInt32

    /// Creates a code from its wire value.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Graceful shutdown or a stream that ended without error.
    public static let noError = HTTP2ErrorCode(rawValue: 0x0)
    /// A protocol error not covered by a more specific code (malformed requests).
    public static let protocolError = HTTP2ErrorCode(rawValue: 0x1)
    /// An unexpected internal error.
    public static let internalError = HTTP2ErrorCode(rawValue: 0x2)
    /// The peer violated flow control (a window beyond 2^31-1, DATA beyond the window).
    public static let flowControlError = HTTP2ErrorCode(rawValue: 0x3)
    /// SETTINGS were not acknowledged in time.
    public static let settingsTimeout = HTTP2ErrorCode(rawValue: 0x4)
    /// A frame arrived on a half-closed or closed stream.
    public static let streamClosed = HTTP2ErrorCode(rawValue: 0x5)
    /// A frame had an invalid size.
    public static let frameSizeError = HTTP2ErrorCode(rawValue: 0x6)
    /// The stream was refused before any processing (it may be retried).
    public static let refusedStream = HTTP2ErrorCode(rawValue: 0x7)
    /// The stream is no longer needed.
    public static let cancel = HTTP2ErrorCode(rawValue: 0x8)
    /// The header compression context could not be maintained.
    public static let compressionError = HTTP2ErrorCode(rawValue: 0x9)
    /// A CONNECT tunnel failed.
    public static let connectError = HTTP2ErrorCode(rawValue: 0xa)
    /// The peer behaves in a way that may generate excessive load (floods, rapid reset).
    public static let enhanceYourCalm = HTTP2ErrorCode(rawValue: 0xb)
    /// The transport's security properties are not sufficient.
    public static let inadequateSecurity = HTTP2ErrorCode(rawValue: 0xc)
    /// HTTP/1.1 is required for this request.
    public static let http11Required = HTTP2ErrorCode(rawValue: 0xd)

    private static let names = [
        "NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR", "SETTINGS_TIMEOUT",
        "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL", "COMPRESSION_ERROR",
        "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED",
    ]

    /// The RFC's name (`PROTOCOL_ERROR`), or the number in hex for a code it does not define.
    public var description: String {
        rawValue < Self.names.count ? Self.names[Int(rawValue)] : "0x" + String(rawValue, radix: 16)
    }
}
