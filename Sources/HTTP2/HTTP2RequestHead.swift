public import HTTPCore

/// A validated HTTP/2 request header block: the pseudo-headers apart, the regular fields
/// in order.
public struct HTTP2RequestHead: Equatable, Sendable {
    /// `:method` (a token; never CONNECT).
    public var method: String
    /// `:scheme` (`https`, `http`).
    public var scheme: String
    /// `:authority` when sent (the shell makes it `Host`).
    public var authority: String?
    /// `:path`: origin-form (`/…`) or `*` for OPTIONS.
    public var path: String
    /// The regular fields as received (lowercase names; `cookie` crumbs kept apart).
    public var fields: HeaderFields

    /// Creates a head.
    public init(method: String, scheme: String, authority: String?, path: String, fields: HeaderFields) {
        self.method = method
        self.scheme = scheme
        self.authority = authority
        self.path = path
        self.fields = fields
    }
}
