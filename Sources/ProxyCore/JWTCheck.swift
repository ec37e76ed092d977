public import ClientAuth
import HTTP1
import UploadRules

/// `auth: { jwt: … }`: the client's token, verified before anything is read past the head.
/// A request without a token, or with one that does not verify, is refused with 401 and
/// `WWW-Authenticate: Bearer` (RFC 6750 §3: `error="invalid_token"` when a token was given);
/// the body says only that the route's JWT refused it, never why the signature failed.
public struct JWTCheck: RequestCheck {
    let verifier: JWTVerifier
    let source: TokenSource
    /// The claims the route's templates read (`{auth:claim:NAME}`), copied into the identity.
    let claimNames: [String]
    /// Unix seconds (injected: tests freeze it).
    let clock: @Sendable () -> Int64
    /// Tokens verified recently, by their bytes.
    let cache = VerifiedTokenCache()

    public init(
        verifier: JWTVerifier, source: TokenSource = .bearer, claimNames: [String] = [],
        clock: @escaping @Sendable () -> Int64 = unixSeconds
    ) {
        self.verifier = verifier
        self.source = source
        self.claimNames = claimNames
        self.clock = clock
    }

    public func check(_ request: CheckRequest) -> CheckAnswer {
        let token: ArraySlice<UInt8>
        switch source.token(in: request.head) {
        case .success(let found): token = found
        case .failure(.missing):
            return .refuse(Self.refusal("a token is required", challenge: "Bearer", reason: "missing"))
        case .failure(let failure):
            return .refuse(
                Self.refusal(
                    "the token is not readable", challenge: "Bearer error=\"invalid_request\"",
                    reason: failure.rawValue))
        }
        let now = clock()
        if let identity = cache.identity(for: token, now: now) { return .identified(identity) }
        switch verifier.verify(token, now: now) {
        case .success(let verified):
            guard let subject = verified.subject, !subject.isEmpty else {
                return .refuse(
                    Self.refusal(
                        "the token names no subject", challenge: "Bearer error=\"invalid_token\"",
                        reason: JWTRejection.missingClaim.rawValue))
            }
            var claims: [String: String] = [:]
            for name in claimNames {
                if let value = verified.claim(named: name) { claims[name] = value }
            }
            let identity = Identity(subject: subject, method: .jwt, claims: claims)
            cache.store(token, identity: identity, expiresAt: expiry(verified))
            return .identified(identity)
        case .failure(let rejection):
            return .refuse(
                Self.refusal(
                    "the token is not valid", challenge: "Bearer error=\"invalid_token\"",
                    reason: rejection.rawValue))
        }
    }

    /// When the cached token stops being valid: `exp` + leeway (`nil`: it has no `exp`).
    func expiry(_ verified: VerifiedToken) -> Int64? {
        guard let exp = verified.claims["exp"]?.numberValue?.numericDate else { return nil }
        let (deadline, overflow) = exp.addingReportingOverflow(max(0, verifier.settings.leeway))
        return overflow ? Int64.max : deadline
    }

    /// A 401 naming the rule; `reason` (a fixed label) goes to the metrics only.
    static func refusal(_ what: String, challenge: String, reason: String) -> Refusal {
        Refusal(
            status: 401, reason: "auth: jwt: \(what)", fields: [.init("WWW-Authenticate", challenge)],
            tally: .auth(.denied, reason: reason))
    }
}

/// The system clock in Unix seconds.
@Sendable public func unixSeconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec)
}

#if canImport(Glibc)
    import Glibc
#endif
