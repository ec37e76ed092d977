public import HTTPCore
public import UploadRules

/// What a route with `auth:` changes in the head it forwards: the client's own identity
/// fields and credential never go upstream as the client wrote them; the identity the checks
/// established may be set instead.
public struct AuthForwarding: Sendable {
    /// Request fields removed before forwarding: the auth service's identity header names
    /// (a client could forge them), and the credential's field unless the route keeps it.
    public var strip: [String]
    /// Identity attributes set upstream under these names (an auth service's
    /// `identity_headers`, when forwarded).
    public var identityHeaders: [String]
    /// `headers.set` values that read the identity (`X-User: "{auth:sub}"`).
    public var templatedSet: [(name: String, value: Template)]

    public init(
        strip: [String] = [], identityHeaders: [String] = [],
        templatedSet: [(name: String, value: Template)] = []
    ) {
        self.strip = strip
        self.identityHeaders = identityHeaders
        self.templatedSet = templatedSet
    }

    /// Applies the route's rules to `headers` for a request sent by `identity`.
    public func apply(to headers: inout HeaderFields, identity: Identity?) {
        for name in strip { headers.removeAll(named: name) }
        guard let identity else { return }
        for name in identityHeaders {
            if let value = identity.attribute(name) { headers.set(name: name, value: value) }
        }
        guard !templatedSet.isEmpty else { return }
        var values = TemplateValues()
        values.identity = identity
        var random = SystemRandomNumberGenerator()
        for (name, template) in templatedSet {
            headers.set(name: name, value: template.render(values, random: &random))
        }
    }
}
