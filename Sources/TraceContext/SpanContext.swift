/// Where a span sits in its trace: the trace, the span's own id, its parent's, and whether the
/// trace is sampled (recorded and exported) or only propagated.
///
/// The proxy makes one for the SERVER span of a request (`Sampler.serverContext`), one
/// `child` per upstream attempt or outside consultation (the CLIENT spans), and sends each
/// child's `traceParent` on the request that child describes.
public struct SpanContext: Hashable, Sendable {
    public var traceID: TraceID
    public var spanID: SpanID
    /// The parent span: the client's span from its `traceparent`, or FormGate's own SERVER
    /// span for a CLIENT span; nil for a root.
    public var parentSpanID: SpanID?
    /// Whether spans of this trace are exported. Children inherit it.
    public var sampled: Bool

    public init(traceID: TraceID, spanID: SpanID, parentSpanID: SpanID?, sampled: Bool) {
        self.traceID = traceID
        self.spanID = spanID
        self.parentSpanID = parentSpanID
        self.sampled = sampled
    }

    /// A new span of the same trace whose parent is this one (same sampling decision).
    public func child(using generator: inout some RandomNumberGenerator) -> SpanContext {
        SpanContext(
            traceID: traceID, spanID: SpanID.random(using: &generator), parentSpanID: spanID, sampled: sampled
        )
    }

    /// The `traceparent` naming this span as the parent: what goes on the request it describes.
    public var traceParent: TraceParent {
        TraceParent(traceID: traceID, parentID: spanID, sampled: sampled)
    }
}
