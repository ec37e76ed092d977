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
        while let bytes = try input.takeHead(&scanner) {
            scanner = HeadScanner(limit: limit)
            let head = try HeadParser.parseResponse(bytes)
            if (100..<200).contains(head.status), head.status != 101 { continue }
            return (head, try MessageFraming.response(head, requestMethod: requestMethod))
        }
        return nil
    }
}
