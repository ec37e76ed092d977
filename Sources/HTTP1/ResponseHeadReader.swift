public import HTTPCore

/// Reads an HTTP/1.1 response's head off a connection: interim (1xx) heads are skipped, the
/// final head is parsed, and its body's framing is decided for the request's method. A `101`
/// is handed back as final: nothing FormGate asks switches protocols, and each caller refuses
/// it in its own terms.
///
/// One reader for every response FormGate reads: the upstream leg (`Exchange`) and each
/// outside-service client (the auth service), so an answer is parsed and framed the same way
/// whoever sent it. The body is then read with a `BodyDecoder` for the framing.
public struct ResponseHeadReader: Sendable {
    private var scanner: HeadScanner
    private let limit: Int

    /// A reader for a head of at most `limit` bytes (each interim head has the same limit).
    public init(limit: Int) {
        self.limit = limit
        scanner = HeadScanner(limit: limit)
    }

    /// Takes heads off `input` until the final one: returns it and its body's framing, or
    /// `nil` when more bytes are needed (what was scanned is remembered).
    ///
    /// - Throws: a head over the limit (`.headTooLarge`), one that does not parse, or a
    ///   framing that is ambiguous (`MessageFraming.response`).
    public mutating func read(from input: some ByteSource, requestMethod: String) throws(HTTP1Error) -> (
        head: ResponseHead, framing: BodyFraming
    )? {
        var spare = HeaderFields()
        return try read(from: input, requestMethod: requestMethod, reusing: &spare)
    }

    /// `read(from:requestMethod:)` into `spare`'s buffers (a kept list's: its bytes and fields
    /// are replaced). While the head is incomplete `spare` keeps them; a head returned took them.
    public mutating func read(
        from input: some ByteSource, requestMethod: String, reusing spare: inout HeaderFields
    ) throws(HTTP1Error) -> (head: ResponseHead, framing: BodyFraming)? {
        var buffer = spare.takeBuffer()
        while try input.takeHead(&scanner, into: &buffer) {
            scanner = HeadScanner(limit: limit)
            var fields = HeaderFields()
            swap(&fields, &spare)
            let head = try HeadParser.parseResponse(buffer, reusing: consume fields)
            if (100..<200).contains(head.status), head.status != 101 { continue }
            return (head, try MessageFraming.response(head, requestMethod: requestMethod))
        }
        var fields = HeaderFields()
        swap(&fields, &spare)
        spare = HeaderFields(buffer: buffer, reusing: consume fields)
        return nil
    }
}
