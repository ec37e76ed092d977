/// One JSON object written straight into bytes, member by member: the access log builds each
/// line once, with no `String` per value and no joining.
///
/// Commas are placed by the writer: call `key(_:)` then one value (or `beginArray()` …
/// `endArray()`); inside an array, values follow one another. Strings are escaped by
/// `appendQuoted(_:to:)` (quotes, backslashes and control characters; UTF-8 kept).
public struct JSONLine: Sendable {
    /// The bytes written so far (the object is complete after `finish()`).
    public private(set) var bytes: [UInt8]
    /// Whether the current object or array has no member yet.
    private var atStart = true
    /// Whether a key was just written (the next value takes no comma).
    private var afterKey = false

    /// Starts an object, with room for `capacity` bytes.
    public init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    /// Writes `"name":`. Names are written as given: pass plain ASCII.
    public mutating func key(_ name: StaticString) {
        if !atStart { bytes.append(UInt8(ascii: ",")) }
        atStart = false
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        afterKey = true
    }

    /// Writes `"name":` for a name known only at run time (escaped).
    public mutating func key(escaping name: some StringProtocol) {
        if !atStart { bytes.append(UInt8(ascii: ",")) }
        atStart = false
        afterKey = true
        string(name)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// Writes a string value, escaped.
    public mutating func string(_ value: some StringProtocol) {
        beginValue()
        Self.appendQuoted(value, to: &bytes)
    }

    /// Appends `value` as a JSON string literal: quotes, backslashes and control characters
    /// escaped, other bytes (UTF-8) kept. The one escaper: `jsonString(_:)` uses it too.
    public static func appendQuoted(_ value: some StringProtocol, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30])
                bytes.append(Hex.digits[Int(byte >> 4)])
                bytes.append(Hex.digits[Int(byte & 15)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes a string value, or `null`.
    public mutating func string(_ value: (some StringProtocol)?) {
        if let value { string(value) } else { null() }
    }

    /// Writes an integer value.
    public mutating func integer(_ value: some BinaryInteger) {
        beginValue()
        appendDecimal(Int64(value))
    }

    /// Writes an integer value, or `null`.
    public mutating func integer(_ value: (some BinaryInteger)?) {
        if let value { integer(value) } else { null() }
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        beginValue()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    /// Writes `null`.
    public mutating func null() {
        beginValue()
        bytes.append(contentsOf: "null".utf8)
    }

    /// Writes a value given as its JSON bytes (a value written elsewhere, as is).
    public mutating func raw(_ json: some Collection<UInt8>) {
        beginValue()
        bytes.append(contentsOf: json)
    }

    /// Writes an ISO 8601 UTC timestamp string, `2026-11-30T22:59:00.123Z`, from Unix
    /// milliseconds.
    public mutating func timestamp(unixMilliseconds milliseconds: Int64) {
        beginValue()
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let date = CivilDate(unixSeconds: seconds)
        let secondOfDay = seconds - (seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400) * 86_400
        bytes.append(UInt8(ascii: "\""))
        appendDigits(date.year, 4)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(date.month, 2)
        bytes.append(UInt8(ascii: "-"))
        appendDigits(date.day, 2)
        bytes.append(UInt8(ascii: "T"))
        appendDigits(Int(secondOfDay / 3600), 2)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(Int(secondOfDay / 60 % 60), 2)
        bytes.append(UInt8(ascii: ":"))
        appendDigits(Int(secondOfDay % 60), 2)
        bytes.append(UInt8(ascii: "."))
        appendDigits(Int(milliseconds - seconds * 1000), 3)
        bytes.append(contentsOf: [UInt8(ascii: "Z"), UInt8(ascii: "\"")])
    }

    /// Starts an array value.
    public mutating func beginArray() {
        beginValue()
        bytes.append(UInt8(ascii: "["))
        atStart = true
    }

    /// Ends the current array.
    public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        atStart = false
    }

    /// Starts an object value (inside an array, or after a key).
    public mutating func beginObject() {
        beginValue()
        bytes.append(UInt8(ascii: "{"))
        atStart = true
    }

    /// Ends the current inner object.
    public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        atStart = false
    }

    /// Closes the outer object and returns its bytes.
    public mutating func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private mutating func beginValue() {
        if afterKey {
            afterKey = false
        } else {
            if !atStart { bytes.append(UInt8(ascii: ",")) }
            atStart = false
        }
    }

    /// `value` in decimal, without a copy through `String`.
    private mutating func appendDecimal(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        let magnitude = value.magnitude
        var divisor: UInt64 = 1
        while divisor <= magnitude / 10 { divisor *= 10 }
        var rest = magnitude
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    /// `value` in decimal, zero-padded to `width` digits.
    private mutating func appendDigits(_ value: Int, _ width: Int) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var rest = value
        if rest >= divisor * 10 {
            appendDecimal(Int64(rest))
            return
        }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
