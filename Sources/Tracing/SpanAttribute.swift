/// A span's or an event's attribute: a key (`http.request.method`, `formgate.route`) and a
/// typed value.
public struct SpanAttribute: Hashable, Sendable {
    public var key: String
    public var value: AttributeValue

    public init(_ key: String, _ value: AttributeValue) {
        self.key = key
        self.value = value
    }
}

/// An attribute's value: OTLP's `AnyValue` kinds that spans use (no arrays, maps or bytes).
public enum AttributeValue: Hashable, Sendable {
    case string(String)
    /// Exported as a decimal string (`intValue`), as OTLP/JSON writes 64-bit integers.
    case int(Int64)
    /// Exported as a JSON number; NaN and the infinities as the strings protobuf's JSON
    /// mapping reads (`"NaN"`, `"Infinity"`, `"-Infinity"`).
    case double(Double)
    case bool(Bool)

    /// A string value from bytes a client sent: ill-formed UTF-8 is replaced by U+FFFD, so
    /// the export is always valid JSON.
    public static func string(utf8 bytes: some Collection<UInt8>) -> AttributeValue {
        .string(String(decoding: bytes, as: UTF8.self))
    }
}
