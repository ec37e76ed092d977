/// One forwarded (or dropped) part, for the access log: what the client sent and what the
/// rules made of it. Not generic, so the proxy's log record holds a pipeline's records as
/// they are.
public struct PartLogRecord: Sendable {
    public var name: String
    public var filename: String?
    public var originalFilename: String?
    public var declaredType: String?
    public var sniffedType: String?
    public var contentType: String?
    public var bytes: Int64 = 0
    public var dropped = false
    /// The field was renamed by `rename_fields`.
    public var renamed = false
    public var digests: [(DigestAlgorithm, String)] = []
    /// What the route's scan found (`clean`, `infected:<signature>`, `error`, `skipped`); nil
    /// when the part was not scanned.
    public var scan: String?
    /// What `strip_metadata` removed from the file (empty: nothing, or not an image it strips).
    public var stripped: [String] = []
}
