internal import CNghttp2

/// A failure reported by libnghttp2: a negative `nghttp2_error` code and the call that
/// returned it.
///
/// Thrown by `HTTP2ServerSession`. A fatal error (`isFatal`) means the session cannot go on:
/// the caller closes the connection (there is nothing left to flush that the peer would
/// accept). A non-fatal one (a response on a stream the peer already reset) concerns one
/// call only.
public struct HTTP2Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// The `nghttp2_error` value (negative), e.g. -905 for too many CONTINUATION frames.
    public var code: Int32
    /// The libnghttp2 function that failed.
    public var operation: String

    /// Creates an error from a libnghttp2 return value.
    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    /// Whether libnghttp2 considers the session unusable after this error.
    public var isFatal: Bool { nghttp2_is_fatal(code) != 0 }

    /// Whether the peer flooded the session (frames it provoked without reading their
    /// answers, too many CONTINUATION frames) rather than breaking the protocol.
    public var isFlood: Bool { code == Self.flooded || code == Self.tooManyContinuations }

    /// The operation, libnghttp2's message and the code.
    public var description: String {
        "\(operation): \(String(cString: nghttp2_strerror(code))) (\(code))"
    }

    /// libnghttp2's code for more CONTINUATION frames than `HTTP2Settings.maxContinuations`.
    public static let tooManyContinuations = Int32(NGHTTP2_ERR_TOO_MANY_CONTINUATIONS.rawValue)
    /// libnghttp2's code for a peer that does not read the frames queued for it (ACK floods).
    public static let flooded = Int32(NGHTTP2_ERR_FLOODED.rawValue)
    /// libnghttp2's code for a connection that did not start with the client preface.
    public static let badClientMagic = Int32(NGHTTP2_ERR_BAD_CLIENT_MAGIC.rawValue)
}
