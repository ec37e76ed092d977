public import HTTPCore

/// The header section of one part, validated: it has exactly one `form-data`
/// `Content-Disposition` with a `name`, and at most one `Content-Type`.
///
/// A view: its fields lie in the parser's buffers (`PartHeadFields`), so a head costs no copy
/// of them and copying a head retains one object. The parser fills the same buffers for the
/// next part when no head refers to them any more; a handler that keeps a head past its part
/// keeps those buffers, and the parser starts new ones (the copy happens only then).
public struct PartHead: Equatable, Sendable {
    /// Position of the part in the body, from 0.
    public var index: Int
    /// The body offset of the part's first content byte (the byte after its header section).
    public var contentOffset: Int64
    /// The parsed fields, shared with the parser until its next part.
    let fields: PartHeadFields

    /// Every header line as received, in order.
    public var headers: HeaderFields { _read { yield fields.headers } }
    /// The parsed `Content-Disposition`.
    public var disposition: ContentDisposition { _read { yield fields.disposition } }
    /// The part's `Content-Type` (from the header, or inline in the disposition), if any and
    /// if it parses.
    public var contentType: MediaType? { _read { yield fields.contentType } }
    /// The `Content-Type` value as received (header or inline), when not empty: it differs
    /// from `contentType` being `nil` when the value does not parse (`invalid_part_content_type`).
    public var declaredContentType: [UInt8]? { _read { yield fields.declaredContentType } }

    /// Creates a part head (its own fields, not a parser's).
    public init(
        index: Int, headers: HeaderFields, disposition: ContentDisposition, contentType: MediaType?,
        declaredContentType: [UInt8]? = nil, contentOffset: Int64 = 0
    ) {
        let fields = PartHeadFields()
        fields.headers = headers
        fields.disposition = disposition
        fields.contentType = contentType
        fields.declaredContentType = declaredContentType ?? contentType?.serialized
        self.init(index: index, fields: fields, contentOffset: contentOffset)
    }

    /// A head over `fields` (the parser's, filled for this part).
    init(index: Int, fields: PartHeadFields, contentOffset: Int64) {
        self.index = index
        self.fields = fields
        self.contentOffset = contentOffset
    }

    public static func == (lhs: PartHead, rhs: PartHead) -> Bool {
        lhs.index == rhs.index && lhs.contentOffset == rhs.contentOffset
            && (lhs.fields === rhs.fields
                || (lhs.headers == rhs.headers && lhs.disposition == rhs.disposition
                    && lhs.contentType == rhs.contentType
                    && lhs.declaredContentType == rhs.declaredContentType))
    }

    /// Whether a `Content-Type` was declared that does not parse.
    public var hasInvalidContentType: Bool { fields.declaredContentType != nil && fields.contentType == nil }

    /// The field name bytes (always present on a parsed part).
    public var name: [UInt8] { fields.disposition.name ?? [] }
    /// The field name as a string.
    public var nameString: String {
        guard let name = fields.disposition.name else { return "" }
        return String(decoding: name, as: UTF8.self)
    }
    /// The client's file name, if this is a file part.
    public var filename: [UInt8]? { fields.disposition.filename }
    /// The client's file name as a string.
    public var filenameString: String? { fields.disposition.filenameString }
    /// A part is a file when it carries a `filename` (even an empty one).
    public var isFile: Bool { fields.disposition.filename != nil }
}

/// A part head's fields and the buffers they are read into: the parser's, filled again for
/// each part while no `PartHead` refers to them (the parser checks), so a head is a view, not
/// a copy. Mutated only by the parser that owns it, and only while it is the one reference.
final class PartHeadFields: @unchecked Sendable {
    /// The header lines, in order (the parser appends to them line by line).
    var headers = HeaderFields()
    var disposition = ContentDisposition(name: nil as [UInt8]?)
    var contentType: MediaType?
    var declaredContentType: [UInt8]?
    /// Where `disposition`'s name and file name and `declaredContentType` are read.
    var values = PartValueBuffers()

    /// What a parser whose buffers were taken keeps: shared, so never written to.
    static let spent = PartHeadFields()

    /// Lets go of the last part's results, which share `values`: the next part's are read
    /// into them in place.
    func releaseResults() {
        disposition = ContentDisposition(name: nil as [UInt8]?)
        contentType = nil
        declaredContentType = nil
    }
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
