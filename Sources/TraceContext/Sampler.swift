/// Decides which traces are recorded, parent-based as OpenTelemetry's default sampler: a valid
/// `traceparent` from the client decides (its `sampled` flag is followed, either way);
/// otherwise the ratio decides from the trace id alone, as OpenTelemetry's `TraceIdRatioBased`
/// does: sampled when the id's last 8 bytes, read big-endian, are below `ratio × 2^64`. So the
/// decision is the same for the same id in every process, and a trace id sampled at one ratio
/// is sampled at every higher one.
public struct Sampler: Hashable, Sendable {
    /// The share of new traces recorded, 0…1 (`tracing.sample`).
    public let ratio: Double
    /// Ids whose last 8 bytes are below this are sampled (with `ratio` 1 every id is).
    private let bound: UInt64

    /// A sampler of `ratio` (clamped to 0…1; NaN counts as 0).
    public init(ratio: Double) {
        let clamped = ratio >= 1 ? 1 : (ratio > 0 ? ratio : 0)
        self.ratio = clamped
        if clamped >= 1 {
            bound = .max
        } else {
            // `clamped × 2^64` is below 2^64 but may round up to it in a Double.
            let scaled = clamped * 18_446_744_073_709_551_616.0
            bound = scaled >= 18_446_744_073_709_551_615.0 ? .max : UInt64(scaled)
        }
    }

    /// Whether a trace with no sampled-or-not parent is recorded.
    public func samples(_ traceID: TraceID) -> Bool {
        ratio >= 1 || traceID.low < bound
    }

    /// The context of a request's SERVER span: the client's trace (with the client's span as
    /// parent, its decision followed) when `incoming` is given, else a new trace decided by
    /// the ratio. Pass `nil` for an absent, invalid or repeated `traceparent`.
    public func serverContext(
        incoming: TraceParent?, using generator: inout some RandomNumberGenerator
    ) -> SpanContext {
        let spanID = SpanID.random(using: &generator)
        if let incoming {
            return SpanContext(
                traceID: incoming.traceID, spanID: spanID, parentSpanID: incoming.parentID,
                sampled: incoming.sampled)
        }
        let traceID = TraceID.random(using: &generator)
        return SpanContext(traceID: traceID, spanID: spanID, parentSpanID: nil, sampled: samples(traceID))
    }
}
