import HTTPCore

/// A W3C trace id: 16 bytes, never all zero, rendered as 32 lower-case hex digits (in a
/// `traceparent` header and in OTLP/HTTP JSON alike).
public struct TraceID: Hashable, Sendable, CustomStringConvertible {
    /// Bytes 0–7, big-endian (the first 16 hex digits).
    public var high: UInt64
    /// Bytes 8–15, big-endian (the last 16 hex digits; what `Sampler` decides on).
    public var low: UInt64

    /// The id whose bytes are `high` then `low`, big-endian. May be the invalid all-zero id.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// A random id from `generator` (drawn again in the vanishing case that it is all zero).
    /// `IDGenerator` is the cheap one the proxy uses.
    public static func random(using generator: inout some RandomNumberGenerator) -> TraceID {
        while true {
            let id = TraceID(high: generator.next(), low: generator.next())
            if id.isValid { return id }
        }
    }

    /// Whether some byte is not zero (W3C: the all-zero id is invalid).
    public var isValid: Bool { high != 0 || low != 0 }

    /// Appends the 32 lower-case hex digits.
    public func appendHex(to out: inout [UInt8]) {
        TraceID.appendHex(high, to: &out)
        TraceID.appendHex(low, to: &out)
    }

    /// The 32 lower-case hex digits.
    public var description: String {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        appendHex(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses exactly 32 lower-case hex digits (upper case refused, as W3C requires); the
    /// all-zero id parses (check `isValid`).
    public init?(hex: some Collection<UInt8>) {
        guard hex.count == 32 else { return nil }
        guard let high = TraceID.word(hex.prefix(16)), let low = TraceID.word(hex.dropFirst(16)) else {
            return nil
        }
        self.init(high: high, low: low)
    }

    /// `word` as 16 lower-case hex digits, most significant first.
    static func appendHex(_ word: UInt64, to out: inout [UInt8]) {
        for shift in stride(from: 60, through: 0, by: -4) {
            out.append(Hex.digits[Int(truncatingIfNeeded: (word >> UInt64(shift)) & 15)])
        }
    }

    /// The value of exactly 16 lower-case hex digits, or nil.
    static func word(_ digits: some Collection<UInt8>) -> UInt64? {
        guard digits.count == 16 else { return nil }
        var value: UInt64 = 0
        for byte in digits {
            let nibble: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): nibble = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): nibble = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(nibble)
        }
        return value
    }
}
