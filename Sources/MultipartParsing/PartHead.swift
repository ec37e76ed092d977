public import HTTPCore

/// The header section of one part, validated: it has exactly one `form-data`
/// `Content-Disposition` with a `name`, and at most one `Content-Type`.
public struct PartHead: Equatable, Sendable {
    /// Position of the part in the body, from 0.
    public var index: Int
    /// Every header line as received, in order.
    public var headers: HeaderFields
    /// The parsed `Content-Disposition`.
    public var disposition: ContentDisposition
    /// The part's `Content-Type` (from the header, or inline in the disposition), if any and
    /// if it parses.
    public var contentType: MediaType?
    /// The `Content-Type` value as received (header or inline), when not empty: it differs
    /// from `contentType` being `nil` when the value does not parse (`invalid_part_content_type`).
    public var declaredContentType: [UInt8]?
    /// The body offset of the part's first content byte (the byte after its header section).
    public var contentOffset: Int64

    /// Creates a part head.
    public init(
        index: Int, headers: HeaderFields, disposition: ContentDisposition, contentType: MediaType?,
        declaredContentType: [UInt8]? = nil, contentOffset: Int64 = 0
    ) {
        self.index = index
        self.contentOffset = contentOffset
        self.headers = headers
        self.disposition = disposition
        self.contentType = contentType
        self.declaredContentType = declaredContentType ?? contentType?.serialized
    }

    /// Whether a `Content-Type` was declared that does not parse.
    public var hasInvalidContentType: Bool { declaredContentType != nil && contentType == nil }

    /// The field name bytes (always present on a parsed part).
    public var name: [UInt8] { disposition.name ?? [] }
    /// The field name as a string.
    public var nameString: String { String(decoding: name, as: UTF8.self) }
    /// The client's file name, if this is a file part.
    public var filename: [UInt8]? { disposition.filename }
    /// The client's file name as a string.
    public var filenameString: String? { disposition.filenameString }
    /// A part is a file when it carries a `filename` (even an empty one).
    public var isFile: Bool { disposition.isFile }
}

/// What the parser reports, in order: for each part `partBegin`, zero or more `body`, then
/// `partEnd`; after the last part, `end`.
public enum MultipartEvent {
    /// A part's header section was read and validated.
    case partBegin(PartHead)
    /// Part content. The bytes are borrowed: valid only during the handler call.
    case body(UnsafeRawBufferPointer)
    /// The current part ended.
    case partEnd
    /// The closing delimiter was read.
    case end
}

/// Receives parser events; the parser is generic over it, so calls dispatch statically.
public protocol MultipartEventHandler {
    /// Handles one event. Bytes in `.body` are valid only during the call. The event is the
    /// handler's: a part head can be kept without a copy.
    mutating func handle(_ event: consuming MultipartEvent)
}

/// Adapts a closure to `MultipartEventHandler`.
public struct ClosureEventHandler: MultipartEventHandler {
    let body: (MultipartEvent) -> Void

    /// Wraps `body`.
    public init(_ body: @escaping (MultipartEvent) -> Void) {
        self.body = body
    }

    public mutating func handle(_ event: MultipartEvent) {
        body(event)
    }
}
