/// Something that happened at one instant of a span (the first and last byte each way).
public struct SpanEvent: Hashable, Sendable {
    public var name: String
    /// Unix nanoseconds.
    public var timeUnixNano: UInt64
    public var attributes: [SpanAttribute]

    public init(name: String, timeUnixNano: UInt64, attributes: [SpanAttribute] = []) {
        self.name = name
        self.timeUnixNano = timeUnixNano
        self.attributes = attributes
    }
}
