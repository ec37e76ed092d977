public import MultipartParsing

/// `limits:` at run time; exceeding one is a 413 (or 431 for the head). The multipart limits
/// are the parser's own type, handed to every request's parser as they are.
public struct Limits: Sendable, Equatable {
    /// `header_bytes`: the request head, request line included.
    public var headerBytes = 32 * 1024
    /// `body_bytes`: the request body as received (after de-chunking).
    public var bodyBytes: Int64 = 4 << 30
    /// `connections`: client connections open at once, over all workers.
    public var connections = 10_000
    /// `parts`, `part_header_bytes`, `field_bytes`, `file_bytes`.
    public var multipart = MultipartLimits()

    public init() {}

    /// `parts`: parts in one multipart body.
    public var parts: Int {
        get { multipart.parts }
        set { multipart.parts = newValue }
    }

    /// `part_header_bytes`: one part's header section.
    public var partHeaderBytes: Int {
        get { multipart.partHeaderBytes }
        set { multipart.partHeaderBytes = newValue }
    }

    /// `field_bytes`: the body of one non-file part.
    public var fieldBytes: Int64 {
        get { multipart.fieldBytes }
        set { multipart.fieldBytes = newValue }
    }

    /// `file_bytes`: the body of one file part.
    public var fileBytes: Int64 {
        get { multipart.fileBytes }
        set { multipart.fileBytes = newValue }
    }
}
