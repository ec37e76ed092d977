/// A W3C span id (`parent-id` in a `traceparent`): 8 bytes, never all zero, rendered as 16
/// lower-case hex digits.
public struct SpanID: Hashable, Sendable, CustomStringConvertible {
    /// The 8 bytes, big-endian.
    public var value: UInt64

    /// The id whose bytes are `value`, big-endian. May be the invalid all-zero id.
    public init(_ value: UInt64) {
        self.value = value
    }

    /// A random id from `generator` (drawn again in the vanishing case that it is zero).
    public static func random(using generator: inout some RandomNumberGenerator) -> SpanID {
        while true {
            let id = SpanID(generator.next())
            if id.isValid { return id }
        }
    }

    /// Whether some byte is not zero (W3C: the all-zero id is invalid).
    public var isValid: Bool { value != 0 }

    /// Appends the 16 lower-case hex digits.
    public func appendHex(to out: inout [UInt8]) {
        TraceID.appendHex(value, to: &out)
    }

    /// The 16 lower-case hex digits.
    public var description: String {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        appendHex(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses exactly 16 lower-case hex digits (upper case refused); zero parses (check
    /// `isValid`).
    public init?(hex: some Collection<UInt8>) {
        guard let value = TraceID.word(hex) else { return nil }
        self.init(value)
    }
}
