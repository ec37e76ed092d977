/// A JSON value (RFC 8259) as `JSONParser` reads it: what JWT headers, claims sets and JWKS
/// documents are made of.
///
/// Numbers keep their literal text (claims are rendered as sent) beside their value; object
/// members keep their order, and a parsed object never has two members of the same name.
public enum JSONValue: Equatable, Sendable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, with its literal text.
    case number(JSONNumber)
    /// A string (any escapes resolved; always valid Unicode).
    case string(String)
    /// An array, in order.
    case array([JSONValue])
    /// An object, members in order.
    case object(JSONObject)

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The object, when this is an object.
    public var objectValue: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The number, when this is a number.
    public var numberValue: JSONNumber? {
        if case .number(let number) = self { return number }
        return nil
    }
}

/// A JSON number: its literal text as it appeared in the document and its value.
///
/// Integer literals of up to 15 digits (every NumericDate) are kept as an `Int64`, whose
/// decimal form is the literal (the grammar allows no leading zeros or `+`); others keep
/// their text. So the common claims cost no string.
public struct JSONNumber: Equatable, Sendable {
    private enum Storage: Equatable, Sendable {
        case integer(Int64)
        case text(String)
    }

    private let storage: Storage
    /// The value as a double (integers beyond 2^53 lose precision).
    public let doubleValue: Double

    /// The literal, exactly as written (`1516239022`, `-0.5e3`).
    public var literal: String {
        switch storage {
        case .integer(let value): String(value)
        case .text(let text): text
        }
    }

    /// Creates a number from a literal the JSON grammar accepts; `nil` if it does not.
    public init?(literal: String) {
        let bytes = Array(literal.utf8)
        let number = bytes.withUnsafeBufferPointer { buffer -> JSONNumber? in
            guard !buffer.isEmpty, JSONParser.numberLength(buffer, from: 0) == buffer.count else {
                return nil
            }
            return JSONNumber(validLiteral: buffer)
        }
        guard let number else { return nil }
        self = number
    }

    /// A number from bytes the grammar accepts (`JSONParser.numberLength` covered them all);
    /// `nil` only if the double conversion fails, which the grammar rules out.
    init?(validLiteral bytes: UnsafeBufferPointer<UInt8>) {
        if bytes.count <= 15, let integer = Self.plainInteger(bytes) {
            storage = .integer(integer)
            doubleValue = Double(integer)
            return
        }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let value = Double(text) else { return nil }
        storage = .text(text)
        doubleValue = value
    }

    /// The value of a literal that is an optional `-` and digits only (not `-0`, whose
    /// decimal form would lose the sign), else `nil`.
    private static func plainInteger(_ literal: UnsafeBufferPointer<UInt8>) -> Int64? {
        var digits = literal[...]
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        var value: Int64 = 0
        for byte in digits {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int64(digit)
        }
        if negative && value == 0 { return nil }
        return negative ? -value : value
    }

    /// The value as a whole number of seconds for a NumericDate (RFC 7519 section 2):
    /// fractions are truncated toward negative infinity; `nil` for a value outside `Int64`
    /// (`1e400` reads as infinity: a date no clock reaches is not a date, as PyJWT also refuses).
    public var numericDate: Int64? {
        if case .integer(let value) = storage { return value }
        if let exact = Int64(literal) { return exact }
        let floored = doubleValue.rounded(.down)
        guard floored.isFinite, floored < 9.2e18, floored > -9.2e18 else { return nil }
        return Int64(floored)
    }
}

/// A JSON object: members in document order, names unique.
///
/// Lookups are linear: JWT headers and claims sets have a handful of members, and a linear
/// scan of short strings costs less than hashing them.
public struct JSONObject: Equatable, Sendable {
    /// One member: a name and its value.
    public struct Member: Equatable, Sendable {
        /// The member name.
        public var name: String
        /// The member value.
        public var value: JSONValue

        /// Creates a member.
        public init(name: String, value: JSONValue) {
            self.name = name
            self.value = value
        }
    }

    /// The members in document order.
    public var members: [Member]

    /// Creates an object from members; the caller keeps names unique.
    public init(members: [Member] = []) {
        self.members = members
    }

    /// The value of the member called `name` (exact, case-sensitive), if any.
    public subscript(name: String) -> JSONValue? {
        for member in members where member.name == name { return member.value }
        return nil
    }

    /// Whether a member called `name` exists.
    public func contains(_ name: String) -> Bool {
        members.contains { $0.name == name }
    }
}
