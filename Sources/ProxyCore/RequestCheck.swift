public import HTTP1

/// A request-level check (authentication, a rate limit, an external scanner): it sees the
/// head before any body byte is forwarded, and passes, refuses, or holds the request until a
/// verdict arrives. Checks run in order; the first refusal wins.
public protocol RequestCheck: Sendable {
    /// Judges `head` on `route`. A `hold` is answered later through the connection's
    /// `verdict(_:_:now:actions:)` with the id the exchange gives it (the check's index).
    func check(_ head: RequestHead, route: Route?) -> CheckAnswer
}

/// A check's first answer.
public enum CheckAnswer: Sendable, Equatable {
    /// The request may go on.
    case pass
    /// Refused with `status` (401, 403, 429, ...) and a reason for the client and the log.
    case refuse(status: Int, reason: String)
    /// The answer comes later; the exchange waits at most `milliseconds` (then 503).
    case hold(milliseconds: Int64)
}

/// A verdict that ends a hold.
public enum Verdict: Sendable, Equatable {
    /// Go on: the held bytes flow.
    case release
    /// Refuse with `status` and a reason.
    case refuse(status: Int, reason: String)
    /// Drop the request: the upstream gets nothing more and the connection closes unanswered.
    case abort
}
