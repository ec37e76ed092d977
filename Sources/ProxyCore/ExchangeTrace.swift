import HTTPCore
public import TraceContext

/// A sampled request's trace (`tracing:`): its SERVER span's context (the client's trace
/// followed when it sent a valid `traceparent`), the CLIENT span of its upstream attempt (whose
/// id goes upstream in `traceparent`), and the clock readings (milliseconds) of the first and
/// last byte each way, which become the spans' events. The shell builds the spans from it and
/// the access record when the exchange ends (`AccessRecord.trace`); an unsampled request has
/// none, and its client's `traceparent` goes upstream untouched.
public struct ExchangeTrace: Sendable {
    /// The SERVER span.
    public var server: SpanContext
    /// The CLIENT span of the upstream attempt (a child of `server`).
    public var upstream: SpanContext
    /// The first and the last request body byte read from the client.
    public var bodyFirstByte: Int64?
    public var bodyLastByte: Int64?
    /// The upstream connection asked for, its request head queued, its body's last byte
    /// queued, its response head read.
    public var upstreamStart: Int64?
    public var upstreamHeadSent: Int64?
    public var upstreamBodySent: Int64?
    public var upstreamResponseHead: Int64?
    /// Where the upstream attempt went.
    public var upstreamTarget: UpstreamURL?

    /// The trace of a request whose head carries `headers`, when `sampler` samples it.
    static func start(
        _ headers: HeaderFields, sampler: Sampler, generator: inout IDGenerator
    ) -> ExchangeTrace? {
        let server = sampler.serverContext(incoming: TraceParent(headers: headers), using: &generator)
        guard server.sampled else { return nil }
        return ExchangeTrace(server: server, upstream: server.child(using: &generator))
    }
}
