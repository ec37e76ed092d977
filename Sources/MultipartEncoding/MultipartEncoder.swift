public import HTTPCore

/// Writes a canonical RFC 7578 body into any `ByteSink`, one part at a time.
///
/// Output: CRLF line breaks, `--boundary` delimiters, one `Content-Disposition: form-data`
/// per part (see `ContentDisposition.serialized` for quoting), then the other headers given.
/// Content bytes are written as they come. The caller streams: `beginPart`, `writeBody`
/// any number of times, then the next `beginPart` or `finish`.
public struct MultipartEncoder: Sendable {
    /// The boundary this encoder writes.
    public let boundary: Boundary
    /// Parts begun so far.
    public private(set) var partCount = 0
    /// Whether `finish` was called.
    public private(set) var isFinished = false

    /// Every delimiter, the first and the closing one included, starts with CRLF.
    public let leadingLineBreak: Bool
    /// Where part heads are built before they are written (its `count` is the room): kept, so
    /// a body of many parts costs one buffer, not one per part.
    private var scratch: [UInt8] = []

    /// Creates an encoder; by default with a fresh random boundary.
    ///
    /// - Parameter leadingLineBreak: write every delimiter as `CRLF--boundary`, so parts can
    ///   be written to separate sinks and reordered; whoever assembles the body drops its
    ///   first two bytes (that CRLF).
    public init(boundary: Boundary = .random(), leadingLineBreak: Bool = false) {
        self.boundary = boundary
        self.leadingLineBreak = leadingLineBreak
    }

    /// `init(boundary:leadingLineBreak:)` building its heads in `scratch` (an earlier encoder's,
    /// `takeScratch()`; its bytes are never read, only overwritten).
    public init(boundary: Boundary, leadingLineBreak: Bool, scratch: consuming [UInt8]) {
        self.init(boundary: boundary, leadingLineBreak: leadingLineBreak)
        swap(&self.scratch, &scratch)
    }

    /// Takes the buffer part heads are built in, for another encoder (this one builds its next
    /// head in a new one).
    public mutating func takeScratch() -> [UInt8] {
        var taken: [UInt8] = []
        swap(&taken, &scratch)
        return taken
    }

    /// The `Content-Type` header value announcing this body.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Starts a part: delimiter, `Content-Disposition`, `headers` in order, blank line.
    ///
    /// `headers` must not contain `Content-Disposition`; names must be tokens and values free
    /// of control characters (so nothing can inject a header line).
    public mutating func beginPart(
        _ disposition: ContentDisposition, headers: HeaderFields = HeaderFields(),
        into sink: inout some ByteSink
    ) throws(MultipartEncodingError) {
        try writeHead(headers, extra: disposition.serializedUpperBound, into: &sink) {
            $0.append("\r\nContent-Disposition: ")
            disposition.appendSerialized(to: &$0)
        }
    }

    /// `beginPart(_:headers:into:)` for a part called `name`, a file part when `filename` is
    /// given; the disposition is written as `ContentDisposition.serialized` writes it.
    public mutating func beginPart(
        name: String, filename: String? = nil, headers: HeaderFields = HeaderFields(),
        into sink: inout some ByteSink
    ) throws(MultipartEncodingError) {
        try writeHead(headers, extra: 64 + 3 * (name.utf8.count + (filename?.utf8.count ?? 0)), into: &sink) {
            writer in
            writer.append("\r\nContent-Disposition: form-data; name=")
            var name = name
            name.withUTF8 { ContentDisposition.appendQuoted($0, to: &writer) }
            if var filename {
                writer.append("; filename=")
                filename.withUTF8 { ContentDisposition.appendQuoted($0, to: &writer) }
            }
        }
    }

    /// Writes a part head: the delimiter, what `disposition` appends (at most `extra` bytes
    /// with its line's name), `headers`, the blank line.
    @inline(__always)
    private mutating func writeHead(
        _ headers: HeaderFields, extra: Int, into sink: inout some ByteSink,
        disposition: (inout ByteWriter) -> Void
    ) throws(MultipartEncodingError) {
        guard !isFinished else { throw MultipartEncodingError(.outOfOrder) }
        try Self.validate(headers)
        writeDelimited(room: 64 + extra + headers.serializedCount, into: &sink) { writer in
            disposition(&writer)
            writer.append("\r\n")
            headers.forEachField { name, value in
                writer.append(name)
                writer.append(": ")
                writer.append(value)
                writer.append("\r\n")
            }
            writer.append("\r\n")
        }
        partCount += 1
    }

    /// Refuses a header a part head must not carry.
    private static func validate(_ headers: HeaderFields) throws(MultipartEncodingError) {
        try headers.forEachField { (name, value) throws(MultipartEncodingError) in
            var valid = !name.isEmpty && !asciiCaseInsensitiveEquals(name, "content-disposition")
            for byte in name where !ByteClass.isTokenChar(byte) { valid = false }
            for byte in value where ByteClass.isForbiddenInFieldValue(byte) { valid = false }
            guard valid else {
                throw MultipartEncodingError(.invalidHeader(String(decoding: name, as: UTF8.self)))
            }
        }
    }

    /// Writes content bytes of the current part as they are.
    @inlinable
    public func writeBody(_ bytes: UnsafeRawBufferPointer, into sink: inout some ByteSink) {
        sink.write(bytes)
    }

    /// Writes the closing delimiter and a final CRLF.
    public mutating func finish(into sink: inout some ByteSink) throws(MultipartEncodingError) {
        try finish(into: &sink, trailing: 2)
    }

    /// The bytes of the closing delimiter alone (`CRLF--boundary--` after a part), without
    /// what follows it.
    public var closeDelimiterLength: Int {
        (partCount > 0 || leadingLineBreak ? 2 : 0) + 4 + boundary.bytes.count
    }

    /// Writes the closing delimiter followed by exactly `trailing` bytes, so a body whose
    /// length was declared before its end comes out at that length: nothing (0), a space of
    /// transport padding (1), or a CRLF then an epilogue of CRLFs and at most one space
    /// (RFC 2046 §5.1.1: the epilogue is to be ignored). Two is the usual final CRLF.
    public mutating func finish(
        into sink: inout some ByteSink, trailing: Int
    ) throws(MultipartEncodingError) {
        guard !isFinished, trailing >= 0 else { throw MultipartEncodingError(.outOfOrder) }
        writeDelimited(room: 4 + trailing, into: &sink) { writer in
            writer.append("--")
            if trailing == 1 { writer.append(UInt8(ascii: " ")) }
            if trailing >= 2 {
                for _ in 0..<(trailing / 2) { writer.append("\r\n") }
                if trailing % 2 == 1 { writer.append(UInt8(ascii: " ")) }
            }
        }
        isFinished = true
    }

    /// Writes a delimiter (`--boundary`, after a CRLF unless it starts the body) and what
    /// `rest` writes after it (at most `room` bytes), built in `scratch` through a
    /// `ByteWriter` (one capacity check, not one per piece) and given to the sink in one call.
    @inline(__always)
    private mutating func writeDelimited(
        room: Int, into sink: inout some ByteSink, _ rest: (inout ByteWriter) -> Void
    ) {
        let bound = 4 + boundary.bytes.count + room
        if scratch.count < bound { scratch = [UInt8](repeating: 0, count: max(bound, 256)) }
        let delimiter: StaticString = partCount > 0 || leadingLineBreak ? "\r\n--" : "--"
        scratch.withUnsafeMutableBufferPointer { buffer in
            var writer = ByteWriter(buffer)
            writer.append(delimiter)
            boundary.bytes.withUnsafeBufferPointer { writer.append($0) }
            rest(&writer)
            sink.write(writer.written)
        }
    }
}
