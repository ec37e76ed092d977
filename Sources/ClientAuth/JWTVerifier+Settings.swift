extension JWTVerifier {
    /// What a token must satisfy besides its signature (the route's `auth: { jwt: … }`).
    public struct Settings: Equatable, Sendable {
        /// The required `iss`, compared exactly; `nil` accepts any issuer.
        public var issuer: String?
        /// The accepted audiences: the token's `aud` (a string or an array of strings) must
        /// name at least one. Empty accepts any audience, and a token without `aud`.
        public var audiences: [String]
        /// Seconds of clock skew allowed on `exp`, `nbf` and `iat` (negative values count as 0).
        public var leeway: Int64
        /// Claims that must be present (any value but `null`).
        public var requiredClaims: [String]
        /// Whether a token without `exp` is refused (`missing_claim`). On by default: a token
        /// that never expires cannot be revoked short of rotating the key.
        public var requiresExpiration: Bool
        /// The longest token accepted, in bytes (default 8 KiB); longer ones are `too_large`
        /// before any decoding.
        public var maximumTokenBytes: Int

        /// Creates settings; the defaults check signature, `exp` (required), `nbf` and `iat`
        /// with no leeway, and no issuer or audience.
        public init(
            issuer: String? = nil, audiences: [String] = [], leeway: Int64 = 0, requiredClaims: [String] = [],
            requiresExpiration: Bool = true, maximumTokenBytes: Int = 8192
        ) {
            self.issuer = issuer
            self.audiences = audiences
            self.leeway = max(0, leeway)
            self.requiredClaims = requiredClaims
            self.requiresExpiration = requiresExpiration
            self.maximumTokenBytes = maximumTokenBytes
        }
    }
}
