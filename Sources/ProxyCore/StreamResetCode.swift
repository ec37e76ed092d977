/// The error code of the RST_STREAM an HTTP/2 shell sends once an exchange ended (RFC 9113
/// §7); the raw values are the protocol's.
public enum StreamResetCode: UInt32, Sendable, Equatable {
    /// The response is complete but the client was still sending (§8.1: stop, without error).
    case noError = 0x0
    /// The request was malformed (§8.1.1).
    case protocolError = 0x1
    /// The response broke off (the upstream failed or timed out after the head).
    case internalError = 0x2
    /// The exchange was dropped unanswered (a request check aborted it).
    case cancel = 0x8
}
