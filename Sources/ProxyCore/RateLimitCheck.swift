import HTTP1
import UploadRules

/// A route's `rate_limit:` as a request check: admits or refuses each request from its head
/// (429 with `Retry-After`, the body unread) through the route's `ClientLimiter`, and charges
/// the body bytes read when the request ends.
///
/// The client is the identity's subject when an earlier check established one, else the
/// client's address: the route's `auth:` check must come before this one (the key at the end
/// is read from the same request, and must be the key of the admission).
public struct RateLimitCheck: RequestCheck {
    /// The limiter, shared by every worker.
    public let limiter: ClientLimiter

    /// A check over `limiter` (one per route, built at configuration load).
    public init(limiter: ClientLimiter) {
        self.limiter = limiter
    }

    public func check(_ request: CheckRequest) -> CheckAnswer {
        let admission = limiter.admit(
            key: Self.key(of: request), declaredBytes: Self.declaredBytes(of: request.head), now: request.now)
        switch admission {
        case .admitted:
            return .pass
        case .limited(let kind, let retryAfterSeconds):
            return .refuse(
                Refusal(
                    status: 429, reason: "rate_limit: \(kind.rawValue)",
                    fields: [.init("Retry-After", String(retryAfterSeconds))],
                    tally: .rateLimited(limit: kind.rawValue)
                ))
        }
    }

    public func ended(_ request: CheckRequest, bytesIn: Int64, now: Int64) {
        limiter.end(
            key: Self.key(of: request), declaredBytes: Self.declaredBytes(of: request.head), bytes: bytesIn,
            now: now)
    }

    /// Whose limits the request counts against.
    static func key(of request: CheckRequest) -> ClientKey {
        if let identity = request.identity { return .identity(identity.subject) }
        return .address(request.client)
    }

    /// The body length the head declares: `nil` for a chunked body (unknown), 0 without a body.
    /// The head parser has already refused an invalid or repeated `Content-Length`.
    static func declaredBytes(of head: RequestHead) -> Int64? {
        guard let framing = try? MessageFraming.request(head) else { return nil }
        switch framing {
        case .none: return 0
        case .length(let length): return length
        case .chunked, .untilClose: return nil
        }
    }
}
