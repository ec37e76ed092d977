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
public struct JSONNumber: Equatable, Sendable {
    /// The literal, exactly as written (`1516239022`, `-0.5e3`).
    public var literal: String
    /// The value as a double (large integers lose precision).
    public var doubleValue: Double

    /// Creates a number from a literal the JSON grammar accepts; `nil` if it does not.
    public init?(literal: String) {
        guard JSONNumber.isValidLiteral(literal.utf8), let value = Double(literal) else { return nil }
        self.literal = literal
        self.doubleValue = value
    }

    init(validLiteral: String, value: Double) {
        literal = validLiteral
        doubleValue = value
    }

    /// The value as a whole number of seconds for a NumericDate (RFC 7519 section 2):
    /// fractions are truncated toward negative infinity; `nil` for a value outside `Int64`
    /// (`1e400` reads as infinity: a date no clock reaches is not a date, as PyJWT also refuses).
    public var numericDate: Int64? {
        // Doubles hold every integer below 2^53 exactly, and the parser made integer
        // literals of up to 15 digits without rounding.
        if doubleValue == doubleValue.rounded(.towardZero), abs(doubleValue) < 1e15 {
            return Int64(doubleValue)
        }
        if let exact = Int64(literal) { return exact }
        let floored = doubleValue.rounded(.down)
        guard floored.isFinite, floored < 9.2e18, floored > -9.2e18 else { return nil }
        return Int64(floored)
    }

    /// Whether `bytes` follow the RFC 8259 number grammar:
    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isValidLiteral(_ bytes: some Collection<UInt8>) -> Bool {
        Array(bytes).withUnsafeBufferPointer { buffer in
            !buffer.isEmpty && JSONParser.numberLength(buffer, from: 0) == buffer.count
        }
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
