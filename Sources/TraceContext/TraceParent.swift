/// A `traceparent` header value (W3C Trace Context Level 1, §3.2): the caller's trace id, its
/// span id (`parent-id`) and its flags, of which Level 1 defines one, `sampled` (bit 0).
///
/// Parsing follows the spec: version `00` is exactly `00-<32 hex>-<16 hex>-<2 hex>`, lower-case
/// hex only; version `ff` is invalid; a later version is read by its first four fields when it
/// is at least as long, and a longer one must continue with `-` after the flags. All-zero trace
/// or parent ids are invalid. Spaces and tabs around the value (HTTP OWS) are ignored. A
/// request with more than one `traceparent` field has none that counts (`init(headers:)`).
public struct TraceParent: Hashable, Sendable, CustomStringConvertible {
    /// The version read (always `0` for a value made here).
    public var version: UInt8
    public var traceID: TraceID
    /// The caller's span: the parent of the span that receives the header.
    public var parentID: SpanID
    /// The trace flags as sent (bits Level 1 does not define included).
    public var flags: UInt8

    /// A version-00 value.
    public init(traceID: TraceID, parentID: SpanID, sampled: Bool) {
        version = 0
        self.traceID = traceID
        self.parentID = parentID
        flags = sampled ? 1 : 0
    }

    /// Whether the caller recorded (or may have recorded) its span: bit 0 of the flags.
    public var sampled: Bool { flags & 1 != 0 }

    /// The length of a version-00 value, and of the four fields of any version.
    static let length = 55

    /// Parses a header value given as bytes; nil when it is not valid.
    public init?(parsing value: UnsafeRawBufferPointer) {
        var start = 0
        var end = value.count
        while start < end, value[start] == 0x20 || value[start] == 0x09 { start += 1 }
        while end > start, value[end - 1] == 0x20 || value[end - 1] == 0x09 { end -= 1 }
        let text = UnsafeRawBufferPointer(rebasing: value[start..<end])
        guard text.count >= Self.length, let version = Self.byte(text, at: 0), version != 0xFF,
            text[2] == 0x2D, text[35] == 0x2D, text[52] == 0x2D,
            let traceID = TraceID(hex: text[3..<35]), traceID.isValid,
            let parentID = SpanID(hex: text[36..<52]), parentID.isValid,
            let flags = Self.byte(text, at: 53)
        else { return nil }
        if text.count > Self.length {
            // Version 00 has nothing after the flags; a later version continues with `-`.
            guard version != 0, text[Self.length] == 0x2D else { return nil }
        }
        self.version = version
        self.traceID = traceID
        self.parentID = parentID
        self.flags = flags
    }

    /// Parses a header value given as text; nil when it is not valid.
    public init?(parsing value: String) {
        var text = value
        let parsed = text.withUTF8 { TraceParent(parsing: UnsafeRawBufferPointer($0)) }
        guard let parsed else { return nil }
        self = parsed
    }

    /// Appends the value FormGate sends: `00-{trace}-{parent}-{01|00}`. Always version 00
    /// (the version FormGate speaks), with only the `sampled` flag, as Level 1 asks.
    public func appendHeaderValue(to out: inout [UInt8]) {
        out.append(contentsOf: [0x30, 0x30, 0x2D])
        traceID.appendHex(to: &out)
        out.append(0x2D)
        parentID.appendHex(to: &out)
        out.append(contentsOf: [0x2D, 0x30, sampled ? 0x31 : 0x30])
    }

    /// `appendHeaderValue(to:)` as text.
    public var description: String {
        var out: [UInt8] = []
        out.reserveCapacity(Self.length)
        appendHeaderValue(to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The byte two lower-case hex digits at `offset` spell, or nil.
    private static func byte(_ text: UnsafeRawBufferPointer, at offset: Int) -> UInt8? {
        guard let high = nibble(text[offset]), let low = nibble(text[offset + 1]) else { return nil }
        return high << 4 | low
    }

    private static func nibble(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
