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
    /// Where part heads are built before they are written: kept with its capacity, so a body
    /// of many parts costs one buffer, not one per part.
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
        guard !isFinished else { throw MultipartEncodingError(.outOfOrder) }
        try headers.forEachField { (name, value) throws(MultipartEncodingError) in
            guard !name.isEmpty, name.allSatisfy(ByteClass.isTokenChar),
                !asciiCaseInsensitiveEquals(name, "content-disposition".utf8),
                !value.contains(where: ByteClass.isForbiddenInFieldValue)
            else { throw MultipartEncodingError(.invalidHeader(String(decoding: name, as: UTF8.self))) }
        }
        var head = scratch
        scratch = []
        head.removeAll(keepingCapacity: true)
        head.reserveCapacity(
            160 + boundary.bytes.count + (disposition.name?.count ?? 0) + (disposition.filename?.count ?? 0)
                + headers.serializedCount)
        appendDelimiter(to: &head)
        head.append(contentsOf: "\r\nContent-Disposition: ".utf8)
        disposition.appendSerialized(to: &head)
        head.append(contentsOf: [0x0D, 0x0A])
        headers.forEachField { name, value in
            head.append(contentsOf: name)
            head.append(contentsOf: ": ".utf8)
            head.append(contentsOf: value)
            head.append(contentsOf: [0x0D, 0x0A])
        }
        head.append(contentsOf: [0x0D, 0x0A])
        sink.write(head)
        scratch = head
        partCount += 1
    }

    /// Writes content bytes of the current part as they are.
    @inlinable
    public func writeBody(_ bytes: UnsafeRawBufferPointer, into sink: inout some ByteSink) {
        sink.write(bytes)
    }

    /// `--boundary`, after a CRLF unless it starts the body.
    private func appendDelimiter(to out: inout [UInt8]) {
        if partCount > 0 || leadingLineBreak { out.append(contentsOf: [0x0D, 0x0A]) }
        out.append(contentsOf: [UInt8(ascii: "-"), UInt8(ascii: "-")])
        out.append(contentsOf: boundary.bytes)
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
        var close = scratch
        scratch = []
        close.removeAll(keepingCapacity: true)
        close.reserveCapacity(boundary.bytes.count + 6 + trailing)
        appendDelimiter(to: &close)
        close.append(contentsOf: "--".utf8)
        if trailing == 1 { close.append(UInt8(ascii: " ")) }
        if trailing >= 2 {
            for _ in 0..<(trailing / 2) { close.append(contentsOf: "\r\n".utf8) }
            if trailing % 2 == 1 { close.append(UInt8(ascii: " ")) }
        }
        sink.write(close)
        scratch = close
        isFinished = true
    }
}
