/// A `ClientLimiter`'s answer to a request's head.
public enum Admission: Sendable, Equatable {
    /// The request may go; pass the ticket to `ClientLimiter.end` exactly once when it ends.
    case admitted(ClientLimiter.Ticket)
    /// Over a limit: answer 429 with `Retry-After: retryAfterSeconds` (at least 1), read
    /// nothing of the body.
    case limited(LimitKind, retryAfterSeconds: Int)
}

/// Which limit refused a request (its raw value is the `limit` label of
/// `formgate_rate_limited_total`).
public enum LimitKind: String, Sendable, CaseIterable {
    /// `requests_per_second` / `burst`.
    case requests
    /// `bytes_per_minute`.
    case bytes
    /// `concurrent`.
    case concurrent
}
