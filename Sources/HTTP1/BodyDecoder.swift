/// Removes a message body's framing: hands out the payload bytes of a Content-Length,
/// chunked or close-delimited body as slices of the caller's buffers, and says where the
/// body ends (the rest belongs to the next message).
public struct BodyDecoder: Sendable {
    enum Mode: Sendable {
        case length(Int64)
        case chunked(ChunkedDecoder)
        case untilClose
        case untilEndOfStream
        case done
    }

    private var mode: Mode
    /// Payload bytes delivered so far.
    public private(set) var payloadBytes: Int64 = 0

    /// Creates a decoder for `framing`.
    public init(_ framing: BodyFraming) {
        switch framing {
        case .none: mode = .done
        case .length(let count): mode = count == 0 ? .done : .length(count)
        case .chunked: mode = .chunked(ChunkedDecoder())
        case .untilClose: mode = .untilClose
        case .untilEndOfStream: mode = .untilEndOfStream
        }
    }

    /// Whether the whole body has been read (never true for close-delimited bodies, nor for one
    /// that ends with its HTTP/2 stream before `endStream(remaining:)`).
    public var isComplete: Bool {
        if case .done = mode { return true }
        return false
    }

    /// Whether the body ends when the connection closes.
    public var endsAtClose: Bool {
        if case .untilClose = mode { return true }
        return false
    }

    /// Decodes from `buffer`, calling `onData` with payload bytes.
    ///
    /// - Returns: how many bytes of `buffer` belong to this body.
    public mutating func decode(
        _ buffer: UnsafeRawBufferPointer, _ onData: (UnsafeRawBufferPointer) -> Void
    ) throws(HTTP1Error) -> Int {
        switch mode {
        case .done:
            return 0
        case .untilClose, .untilEndOfStream:
            if !buffer.isEmpty { onData(buffer) }
            payloadBytes += Int64(buffer.count)
            return buffer.count
        case .length(let remaining):
            let take = Int(min(Int64(buffer.count), remaining))
            if take > 0 { onData(UnsafeRawBufferPointer(rebasing: buffer[..<take])) }
            payloadBytes += Int64(take)
            mode = remaining - Int64(take) == 0 ? .done : .length(remaining - Int64(take))
            return take
        case .chunked(var decoder):
            var delivered = 0
            let used = try decoder.decode(buffer) { bytes in
                delivered += bytes.count
                onData(bytes)
            }
            payloadBytes += Int64(delivered)
            mode = decoder.isComplete ? .done : .chunked(decoder)
            return used
        }
    }

    /// Accounts for `count` bytes of a Content-Length body that the caller moved without
    /// looking at them (at most `remainingLength`).
    public mutating func skip(_ count: Int) {
        guard case .length(let remaining) = mode else { return }
        let taken = min(Int64(count), remaining)
        payloadBytes += taken
        mode = remaining - taken == 0 ? .done : .length(remaining - taken)
    }

    /// Whether the body ends with its HTTP/2 stream and the stream has not ended yet.
    public var endsWithStream: Bool {
        if case .untilEndOfStream = mode { return true }
        return false
    }

    /// The HTTP/2 stream carrying a body that ends with it ended, and `remaining` more bytes
    /// of the body are buffered: from now on the body is exactly that long (decoded, or moved
    /// zero-copy, as a Content-Length body). No effect on other framings.
    public mutating func endStream(remaining: Int) {
        guard case .untilEndOfStream = mode else { return }
        mode = remaining == 0 ? .done : .length(Int64(remaining))
    }

    /// Remaining bytes of a Content-Length body (`nil` for other framings).
    public var remainingLength: Int64? {
        if case .length(let remaining) = mode { return remaining }
        return nil
    }
}
