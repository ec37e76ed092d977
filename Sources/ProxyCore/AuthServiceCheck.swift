import HTTP1

/// `auth: { request: … }`: an auth service decides, as nginx's `auth_request` and Envoy's
/// HTTP `ext_authz` do. The check holds the request; the shell sends the subrequest
/// (`AuthSubrequest`) and turns the service's answer into a verdict with `verdict(for:…)`.
/// With `cache_ttl`, an allowing answer is reused for the same credential without asking.
public struct AuthServiceCheck: RequestCheck, Equatable {
    /// The service and what to send it.
    public let settings: AuthServiceSettings
    /// The identity header whose value is the subject (default: the first identity header).
    public let subjectHeader: String?
    /// Allowing answers by credential, shared by every worker (`nil` without `cache_ttl`).
    public let cache: AuthCache?

    public init(settings: AuthServiceSettings, subjectHeader: String? = nil) {
        self.settings = settings
        self.subjectHeader = subjectHeader
        cache = settings.cacheTTLMilliseconds > 0 ? AuthCache(ttl: settings.cacheTTLMilliseconds) : nil
    }

    public func check(_ request: CheckRequest) -> CheckAnswer {
        if let cache, let key = AuthCache.key(for: request.head, forwardHeaders: settings.forwardHeaders),
            let headers = cache.lookup(key, now: request.now)
        {
            let identity = AuthServiceVerdict.identity(
                headers, settings: settings, subjectHeader: subjectHeader)
            return identity.map { .identified($0) } ?? .pass
        }
        // The service's own timeout ends the wait first; the hold's deadline is a backstop.
        return .hold(.authService(self, request), milliseconds: settings.timeoutMilliseconds + 1_000)
    }

    /// The verdict for the service's answer about `request` (remembered when it allows and
    /// the route caches).
    public func verdict(for answer: AuthServiceVerdict, request: CheckRequest) -> Verdict {
        if let cache, let key = AuthCache.key(for: request.head, forwardHeaders: settings.forwardHeaders) {
            cache.remember(answer, for: key, now: request.now)
        }
        return answer.checkVerdict(settings: settings, subjectHeader: subjectHeader)
    }

    /// Two checks are the same when they ask the same service the same way and share one
    /// cache.
    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.settings == rhs.settings && lhs.subjectHeader == rhs.subjectHeader && lhs.cache === rhs.cache
    }
}
