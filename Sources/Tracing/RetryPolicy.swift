/// What one export attempt came to, and how long to wait before the next: OTLP/HTTP's rules
/// (a 2xx is delivered; 429, 502, 503 and 504 and connection failures are retried after an
/// exponential back-off, or the server's `Retry-After`; any other answer is final), bounded by
/// a number of attempts.
struct RetryPolicy: Hashable, Sendable {
    /// What an attempt came to.
    enum Verdict: Hashable, Sendable {
        case delivered
        /// Worth another attempt; `retryAfterMilliseconds` when the server named a delay.
        case retryable(retryAfterMilliseconds: Int64?)
        /// Another attempt would get the same answer.
        case rejected
    }

    var maxAttempts: Int
    var initialBackoffMilliseconds: Int64
    var maxBackoffMilliseconds: Int64

    init(_ settings: TracingSettings) {
        maxAttempts = max(1, settings.maxAttempts)
        initialBackoffMilliseconds = max(1, settings.initialBackoffMilliseconds)
        maxBackoffMilliseconds = max(initialBackoffMilliseconds, settings.maxBackoffMilliseconds)
    }

    /// The verdict on an HTTP status and its `Retry-After` value (delta-seconds; an HTTP date
    /// is not read, and the back-off applies).
    static func verdict(status: Int, retryAfter: String?) -> Verdict {
        switch status {
        case 200..<300:
            return .delivered
        case 429, 502, 503, 504:
            let seconds = retryAfter.flatMap { Int64($0.trimmingOWS) }.flatMap { $0 >= 0 ? $0 : nil }
            return .retryable(retryAfterMilliseconds: seconds.map { $0 > 86_400 ? 86_400_000 : $0 * 1000 })
        default:
            return .rejected
        }
    }

    /// The wait before attempt `attempt + 1`, or nil when `attempt` was the last allowed:
    /// the server's delay if it named one, else `initial × 2^(attempt-1)` less up to half at
    /// random (`random` is any 64 random bits); never more than the longest back-off.
    func backoff(afterAttempt attempt: Int, retryAfterMilliseconds: Int64?, random: UInt64) -> Int64? {
        guard attempt < maxAttempts else { return nil }
        if let retryAfterMilliseconds { return min(retryAfterMilliseconds, maxBackoffMilliseconds) }
        var delay = initialBackoffMilliseconds
        for _ in 1..<max(1, attempt) where delay < maxBackoffMilliseconds { delay *= 2 }
        delay = min(delay, maxBackoffMilliseconds)
        let half = delay / 2
        return delay - Int64(random % UInt64(half + 1))
    }
}

extension StringProtocol {
    /// The text without spaces and tabs around it.
    var trimmingOWS: Substring {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
