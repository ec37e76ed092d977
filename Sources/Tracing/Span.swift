public import TraceContext

/// One finished span as it is exported: who it is (`SpanContext`'s ids), what it did (name,
/// kind, times), and what it saw (attributes, events, status).
///
/// A value: the proxy fills one in while a request runs and hands it to
/// `SpanExporter.submit(_:)` when the request (or attempt) ends. Times are Unix nanoseconds
/// (`WallClock.nowUnixNano()`).
public struct Span: Hashable, Sendable {
    /// OTLP's `Span.SpanKind`, by its number in the protocol.
    public enum Kind: Int, Hashable, Sendable {
        /// Work inside FormGate.
        case `internal` = 1
        /// A request FormGate answers.
        case server = 2
        /// A request FormGate makes: an upstream attempt, an auth-service or clamd consultation.
        case client = 3
    }

    public var traceID: TraceID
    public var spanID: SpanID
    /// Nil for a root span.
    public var parentSpanID: SpanID?
    /// The span's name (the HTTP semantic conventions: `POST /upload` or `POST`).
    public var name: String
    public var kind: Kind
    public var startTimeUnixNano: UInt64
    public var endTimeUnixNano: UInt64
    public var attributes: [SpanAttribute]
    public var events: [SpanEvent]
    public var status: SpanStatus

    /// A span of `context` with no attributes, no events and an unset status; it ends when it
    /// starts until `endTimeUnixNano` is set.
    public init(context: SpanContext, name: String, kind: Kind, startTimeUnixNano: UInt64) {
        traceID = context.traceID
        spanID = context.spanID
        parentSpanID = context.parentSpanID
        self.name = name
        self.kind = kind
        self.startTimeUnixNano = startTimeUnixNano
        endTimeUnixNano = startTimeUnixNano
        attributes = []
        events = []
        status = .unset
    }

    /// Appends an attribute (OTLP keeps them in order; keys should be unique).
    public mutating func set(_ key: String, _ value: AttributeValue) {
        attributes.append(SpanAttribute(key, value))
    }

    /// Appends an event at `timeUnixNano`.
    public mutating func addEvent(
        _ name: String, at timeUnixNano: UInt64, attributes: [SpanAttribute] = []
    ) {
        events.append(SpanEvent(name: name, timeUnixNano: timeUnixNano, attributes: attributes))
    }
}
