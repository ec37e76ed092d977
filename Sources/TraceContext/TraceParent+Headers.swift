public import HTTPCore

extension TraceParent {
    /// The `traceparent` of a request's header fields, when it has exactly one that parses:
    /// W3C Trace Context §3.2 has a repeated field treated as absent (the trace restarts).
    public init?(headers: HeaderFields) {
        guard headers.count(of: "traceparent") == 1, let value = headers.firstValue("traceparent") else {
            return nil
        }
        let parsed = value.withUnsafeBytes { TraceParent(parsing: $0) }
        guard let parsed else { return nil }
        self = parsed
    }
}
