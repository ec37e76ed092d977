import HTTPCore

/// A push decoder for the chunked transfer coding (RFC 9112 §7.1), strict where lenient
/// decoders have let requests be smuggled: hex sizes of at most 15 digits, CRLF (never a bare
/// LF) after every size line and chunk, extensions that follow RFC 9112 §7.1.1's grammar
/// (`ChunkedDecoder+Extensions.swift`) within the line limit, and a bounded trailer section
/// that is validated and dropped.
///
/// Chunk data is handed out as slices of the caller's buffer; nothing is copied or kept.
public struct ChunkedDecoder: Sendable {
    enum State: Equatable, Sendable {
        case size
        /// Whitespace after the size: only a `;` (an extension) may follow (RFC 9112 BWS).
        case sizeWhitespace
        /// After `;`: optional whitespace, then an extension name.
        case extensionNameStart
        case extensionName
        /// Whitespace after a name: `=` or the next `;` follows.
        case extensionNameEnd
        /// After `=`: optional whitespace, then a token or a quoted string.
        case extensionValueStart
        case extensionToken
        case extensionQuoted
        /// After a backslash in a quoted value.
        case extensionQuotedPair
        /// After a quoted value's closing quote.
        case extensionQuotedEnd
        /// Whitespace after a value: only the next `;` may follow.
        case extensionWhitespace
        case sizeLF
        case data
        case dataCR
        case dataLF
        case trailerLine
        case trailerLF
        case done
    }

    /// The most bytes of a size line (size and extensions) or of the trailer section.
    public let lineLimit: Int
    var state = State.size
    var size: Int64 = 0
    var digits = 0
    var lineBytes = 0
    var trailerBytes = 0
    var trailerLineLength = 0
    var trailerLineHasColon = false
    var decoded: Int = 0

    /// Creates a decoder.
    public init(lineLimit: Int = 4096) {
        self.lineLimit = lineLimit
    }

    /// Whether the last chunk and the trailer section have been read.
    public var isComplete: Bool { state == .done }

    /// Decodes from `buffer`, calling `onData` with each run of chunk data.
    ///
    /// - Returns: how many bytes of `buffer` belong to the chunked body; fewer than
    ///   `buffer.count` only when the body ended inside it (the rest is the next message).
    public mutating func decode(
        _ buffer: UnsafeRawBufferPointer, _ onData: (UnsafeRawBufferPointer) -> Void
    ) throws(HTTP1Error) -> Int {
        var index = 0
        while index < buffer.count {
            if state == .data {
                let take = Int(min(Int64(buffer.count - index), size))
                onData(UnsafeRawBufferPointer(rebasing: buffer[index..<(index + take)]))
                index += take
                size -= Int64(take)
                if size == 0 { state = .dataCR }
                continue
            }
            if state == .done { break }
            try step(buffer[index], at: decoded + index)
            index += 1
        }
        decoded += index
        return index
    }

    /// Decodes from an array (tests).
    public mutating func decode(_ bytes: [UInt8], _ onData: (UnsafeRawBufferPointer) -> Void)
        throws(HTTP1Error)
        -> Int
    {
        var result: Result<Int, HTTP1Error> = .success(0)
        bytes.withUnsafeBytes { buffer in
            do throws(HTTP1Error) {
                result = .success(try decode(buffer, onData))
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }

    private mutating func step(_ byte: UInt8, at offset: Int) throws(HTTP1Error) {
        switch state {
        case .size:
            if let value = Hex.value(of: byte) {
                digits += 1
                guard digits <= 15 else { throw HTTP1Error(.invalidChunkSize, at: offset) }
                size = size << 4 | Int64(value)
                lineBytes += 1
            } else if digits > 0 && byte == UInt8(ascii: ";") {
                state = .extensionNameStart
                try countLine(at: offset)
            } else if digits > 0 && (byte == 0x20 || byte == 0x09) {
                state = .sizeWhitespace
                try countLine(at: offset)
            } else if digits > 0 && byte == 0x0D {
                state = .sizeLF
            } else {
                throw HTTP1Error(.invalidChunkSize, at: offset)
            }
        case .sizeWhitespace:
            try countLine(at: offset)
            if byte == UInt8(ascii: ";") {
                state = .extensionNameStart
            } else if byte != 0x20 && byte != 0x09 {
                throw HTTP1Error(.invalidChunkSize, at: offset)
            }
        case .extensionNameStart, .extensionName, .extensionNameEnd, .extensionValueStart, .extensionToken,
            .extensionQuoted, .extensionQuotedPair, .extensionQuotedEnd, .extensionWhitespace:
            try countLine(at: offset)
            guard let next = Self.extensionState(after: byte, in: state) else {
                throw HTTP1Error(.invalidChunkExtension, at: offset)
            }
            state = next
        case .sizeLF:
            guard byte == 0x0A else { throw HTTP1Error(.invalidChunkSize, at: offset) }
            digits = 0
            lineBytes = 0
            state = size == 0 ? .trailerLine : .data
        case .dataCR:
            guard byte == 0x0D else { throw HTTP1Error(.invalidChunkTerminator, at: offset) }
            state = .dataLF
        case .dataLF:
            guard byte == 0x0A else { throw HTTP1Error(.invalidChunkTerminator, at: offset) }
            state = .size
        case .trailerLine:
            trailerBytes += 1
            guard trailerBytes <= lineLimit else { throw HTTP1Error(.invalidTrailer, at: offset) }
            if byte == 0x0D {
                state = .trailerLF
            } else if (byte < 0x20 && byte != 0x09) || byte == 0x7F {
                throw HTTP1Error(.invalidTrailer, at: offset)
            } else {
                if trailerLineLength == 0 && (byte == 0x20 || byte == 0x09 || byte == UInt8(ascii: ":")) {
                    throw HTTP1Error(.invalidTrailer, at: offset)
                }
                if byte == UInt8(ascii: ":") { trailerLineHasColon = true }
                trailerLineLength += 1
            }
        case .trailerLF:
            guard byte == 0x0A else { throw HTTP1Error(.invalidTrailer, at: offset) }
            if trailerLineLength == 0 {
                state = .done
            } else {
                guard trailerLineHasColon else { throw HTTP1Error(.invalidTrailer, at: offset) }
                trailerLineLength = 0
                trailerLineHasColon = false
                state = .trailerLine
            }
        case .data, .done:
            break
        }
    }

    private mutating func countLine(at offset: Int) throws(HTTP1Error) {
        lineBytes += 1
        guard lineBytes <= lineLimit else { throw HTTP1Error(.invalidChunkExtension, at: offset) }
    }
}
