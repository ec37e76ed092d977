/// What a `SpanExporter` has done since it started; each figure only grows.
public struct ExportCounters: Hashable, Sendable {
    /// Spans the collector accepted (a 2xx answer to their batch).
    public var exported = 0
    /// Spans that will never be exported: the queue was full when they came, their batch
    /// was refused or ran out of attempts (or of the shutdown's time), or they came after
    /// `shutdown`. `formgate_trace_spans_dropped_total`.
    public var dropped = 0
    /// Batches given up on (each one's spans are in `dropped`).
    public var failedExports = 0
    /// Export attempts after a batch's first (connection errors, 429, 502, 503, 504).
    public var retries = 0

    public init() {}
}
