import HTTPCore
public import TraceContext

/// A sampled request's trace (`tracing:`): its SERVER span's context (the client's trace
/// followed when it sent a valid `traceparent`), the CLIENT span of its upstream attempt (whose
/// id goes upstream in `traceparent`), and the clock readings (milliseconds) of the first and
/// last byte each way, which become the spans' events. The shell builds the spans from it and
/// the access record when the exchange ends (`AccessRecord.trace`); an unsampled request has
/// none, and its client's `traceparent` goes upstream untouched.
///
/// A class: the exchange and its access record hold one reference (a struct this size was
/// copied into every record and every `.finish` action); only the exchange's loop mutates it.
public final class ExchangeTrace: @unchecked Sendable {
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
    /// The services consulted on the way (an auth service, Redis for a shared limit, clamd).
    public var consultations: [TracedConsultation] = []

    init(server: SpanContext, upstream: SpanContext) {
        self.server = server
        self.upstream = upstream
    }

    /// Starts a consultation's span (its own id, a child of the SERVER span).
    func consulting(_ service: String, key: Int, now: Int64) {
        var generator = IDGenerator()
        consultations.append(
            TracedConsultation(
                context: server.child(using: &generator), service: service, key: key, start: now))
    }

    /// Ends the open consultation `key` of `service` (any service: `nil`) with `outcome`.
    func consulted(_ service: String?, key: Int, outcome: String, now: Int64) {
        guard
            let index = consultations.lastIndex(where: {
                ($0.service == service || service == nil) && $0.key == key && $0.end == nil
            })
        else { return }
        consultations[index].end = now
        consultations[index].outcome = outcome
    }

    /// The trace of a request whose head carries `headers`, when `sampler` samples it.
    static func start(
        _ headers: HeaderFields, sampler: Sampler, generator: inout IDGenerator
    ) -> ExchangeTrace? {
        let server = sampler.serverContext(incoming: TraceParent(headers: headers), using: &generator)
        guard server.sampled else { return nil }
        return ExchangeTrace(server: server, upstream: server.child(using: &generator))
    }
}

/// One consultation of a traced request: an auth service's verdict, a shared limit's Redis
/// decision, a scanner's verdict on a file.
public struct TracedConsultation: Sendable {
    /// Its CLIENT span's context.
    public var context: SpanContext
    /// `auth_service`, `redis` or `clamd`.
    public var service: String
    /// Which of the request's consultations of the service (a check's index, a hold).
    public var key: Int
    /// When it was asked, and answered (nil: never, the request ended first).
    public var start: Int64
    public var end: Int64?
    /// `release`, `refuse`, `abort`, `local` (decided without the service), or none.
    public var outcome: String?
}

extension Consultation {
    /// The service a traced consultation asks.
    var service: String {
        switch self {
        case .authService: "auth_service"
        case .sharedLimit: "redis"
        }
    }
}

extension Verdict {
    /// A traced consultation's outcome.
    var outcome: String {
        switch self {
        case .release: "release"
        case .decideLocally: "local"
        case .refuse: "refuse"
        case .abort: "abort"
        }
    }
}
