/// Bounds on what one multipart body may contain; exceeding one is `limitExceeded`.
///
/// Defaults follow DESIGN.md's `limits:` section.
public struct MultipartLimits: Equatable, Sendable {
    /// Parts in the body.
    public var parts: Int = 1000
    /// Non-file parts.
    public var fields: Int = .max
    /// File parts (parts with a `filename`).
    public var files: Int = .max
    /// Bytes of one part's header section, line breaks included.
    public var partHeaderBytes: Int = 8 * 1024
    /// Header lines in one part.
    public var headersPerPart: Int = 32
    /// Body bytes of one non-file part.
    public var fieldBytes: Int64 = 1 << 20
    /// Body bytes of one file part.
    public var fileBytes: Int64 = 4 << 30

    /// The defaults.
    public init() {}

    /// Sets the limits given; the others keep their defaults.
    public init(
        parts: Int = 1000, fields: Int = .max, files: Int = .max, partHeaderBytes: Int = 8 * 1024,
        headersPerPart: Int = 32, fieldBytes: Int64 = 1 << 20, fileBytes: Int64 = 4 << 30
    ) {
        self.parts = parts
        self.fields = fields
        self.files = files
        self.partHeaderBytes = partHeaderBytes
        self.headersPerPart = headersPerPart
        self.fieldBytes = fieldBytes
        self.fileBytes = fileBytes
    }
}
