/// Spans whose building waits for the export thread: a request's loop queues what it knows
/// (its record, its trace) and the exporter makes the spans when it sends them, so a loop
/// spends no time on a span that is dropped (a full queue, a collector that is down) and
/// little on one that is sent.
public protocol SpanSource: Sendable {
    /// How many spans `spans()` makes (what the queue counts against its capacity).
    var spanCount: Int { get }
    /// The spans (on the export thread).
    func spans() -> [Span]
}
