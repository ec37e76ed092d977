/// What a verified JWT says about its holder: the subject and the claims, for identity in
/// templates (`{auth:sub}`, `{auth:claim:NAME}`) and the access log.
public struct VerifiedToken: Equatable, Sendable {
    /// The `sub` claim, if present.
    public let subject: String?
    /// The claims set as sent (signature verified).
    public let claims: JSONObject
    /// The algorithm the token was verified with.
    public let algorithm: JWSAlgorithm
    /// The `kid` of the key that verified it, if the key has one.
    public let keyID: String?

    /// Creates a verified token (the verifier does; tests may).
    public init(subject: String?, claims: JSONObject, algorithm: JWSAlgorithm, keyID: String?) {
        self.subject = subject
        self.claims = claims
        self.algorithm = algorithm
        self.keyID = keyID
    }

    /// A top-level claim as text: strings as they are, numbers as their literal, booleans as
    /// `true`/`false`; `nil` for absent claims, `null`, arrays and objects.
    public func claim(named name: String) -> String? {
        switch claims[name] {
        case .string(let text): text
        case .number(let number): number.literal
        case .bool(let flag): flag ? "true" : "false"
        default: nil
        }
    }
}
