/// Who sent a request, as a route's `auth:` established it: what `{auth:…}` template variables
/// read and the access log's `identity` names. It never holds a credential.
public struct Identity: Sendable, Equatable {
    /// Which `auth:` method established it.
    public enum Method: String, Sendable, Equatable {
        case jwt
        case apiKey = "api_key"
        case request
    }

    /// The subject (`{auth:sub}`, the access log's `identity`): a token's `sub`, an API key's
    /// name, or the auth service's subject header.
    public var subject: String
    /// How it was established.
    public var method: Method
    /// A token's claims with scalar values, as text (`{auth:claim:NAME}`).
    public var claims: [String: String]
    /// The auth service's identity headers by lower-cased name (`{auth:NAME}`).
    public var attributes: [String: String]

    public init(
        subject: String, method: Method, claims: [String: String] = [:], attributes: [String: String] = [:]
    ) {
        self.subject = subject
        self.method = method
        self.claims = claims
        self.attributes = attributes
    }

    /// `{auth:NAME}`: an identity header's value (names compare case-insensitively).
    public func attribute(_ name: String) -> String? {
        attributes[name.lowercased()]
    }
}
