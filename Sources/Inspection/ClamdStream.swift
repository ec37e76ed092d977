/// The framing of clamd's `INSTREAM` command, as a pure codec: the command, then the file in
/// chunks each preceded by its length (4 bytes, network order), then a zero length. With the
/// `z` prefix, clamd ends its reply with a NUL (`ClamdReplyReader`).
public enum ClamdStream {
    /// The command that opens a scan (`zINSTREAM` and its NUL).
    public static let command: [UInt8] = Array("zINSTREAM".utf8) + [0]
    /// The command that asks whether clamd is there (`zPING`; it answers `PONG`).
    public static let ping: [UInt8] = Array("zPING".utf8) + [0]
    /// The zero length that ends the stream.
    public static let end: [UInt8] = [0, 0, 0, 0]
    /// The largest chunk written at once: clamd refuses a chunk longer than its
    /// `StreamMaxLength` (25 MiB by default), so chunks stay far below it.
    public static let maxChunk = 1 << 20

    /// The length prefix of a chunk of `count` bytes (1 ... `maxChunk`).
    public static func chunkHeader(_ count: Int) -> (UInt8, UInt8, UInt8, UInt8) {
        precondition(count > 0 && count <= maxChunk, "a chunk is 1 ... maxChunk bytes")
        let value = UInt32(count)
        return (
            UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
            UInt8(truncatingIfNeeded: value)
        )
    }
}

/// Collects clamd's reply up to its terminating NUL, bounded by `ClamdReply.maxReplyLength`.
public struct ClamdReplyReader: Sendable {
    private var bytes: [UInt8] = []
    /// The reply, once its NUL arrived (or `finish()` was called).
    public private(set) var reply: ClamdReply?

    public init() {}

    /// Takes received bytes; returns how many were consumed (the rest follows the reply and
    /// is not clamd's to send).
    public mutating func take(_ input: UnsafeRawBufferPointer) -> Int {
        guard reply == nil else { return 0 }
        if let end = input.firstIndex(of: 0) {
            bytes.append(contentsOf: input[..<end])
            reply = bytes.count > ClamdReply.maxReplyLength ? .garbage : ClamdReply(bytes)
            return end + 1
        }
        bytes.append(contentsOf: input.prefix(ClamdReply.maxReplyLength + 1 - bytes.count))
        if bytes.count > ClamdReply.maxReplyLength { reply = .garbage }
        return input.count
    }

    /// The connection ended: a reply cut before its NUL is `garbage` (never judged on what
    /// arrived: `stream: OK` without its NUL is not an answer).
    public mutating func finish() -> ClamdReply {
        if let reply { return reply }
        reply = .garbage
        return .garbage
    }
}
