import HTTP1
import UploadRules

/// `auth: { request: … }`: an auth service decides, as nginx's `auth_request` and Envoy's
/// HTTP `ext_authz` do. The check holds the request; the shell sends the subrequest
/// (`AuthSubrequest`) and turns the service's answer into a verdict with `verdict(for:…)`.
/// With `cache_ttl`, an allowing answer is reused for the same credential without asking.
public struct AuthServiceCheck: RequestCheck {
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
            return .identified(identity(headers))
        }
        // The service's own timeout ends the wait first; the hold's deadline is a backstop.
        return .hold(milliseconds: settings.timeoutMilliseconds + 1_000)
    }

    /// The verdict for the service's answer about `request` (remembered when it allows and
    /// the route caches).
    public func verdict(for answer: AuthServiceVerdict, request: CheckRequest) -> Verdict {
        switch answer {
        case .allowed(let headers):
            if let cache, let key = AuthCache.key(for: request.head, forwardHeaders: settings.forwardHeaders)
            {
                cache.store(key, identity: headers, now: request.now)
            }
            return .release(identity(headers), tally: .auth(.allowed, reason: "request"))
        case .denied(let status, let headers, let body):
            let contentType = headers.first { $0.name.lowercased() == "content-type" }?.value
            let fields = headers.filter { $0.name.lowercased() != "content-type" }.map {
                Refusal.Field($0.name, $0.value)
            }
            return .refuse(
                Refusal(
                    status: status, reason: "auth: request: refused by the auth service", fields: fields,
                    body: .init(contentType: contentType, bytes: body),
                    tally: .auth(.denied, reason: "service_\(status)")))
        case .failed(let failure):
            if settings.onError == .allow {
                return .release(nil, tally: .auth(.error, reason: failure.rawValue))
            }
            return .refuse(
                Refusal(
                    status: 503, reason: "auth: request: the auth service is unavailable",
                    tally: .auth(.error, reason: failure.rawValue)))
        }
    }

    /// The identity an allowing answer establishes: its identity headers, the subject among them.
    func identity(_ headers: [AuthServiceVerdict.IdentityHeader]) -> Identity {
        var attributes: [String: String] = [:]
        for header in headers { attributes[header.name.lowercased()] = header.value }
        let subjectName = (subjectHeader ?? settings.identityHeaders.first)?.lowercased()
        return Identity(
            subject: subjectName.flatMap { attributes[$0] } ?? "", method: .request, attributes: attributes)
    }
}
