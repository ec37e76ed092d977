/// A strict RFC 8259 JSON parser for small documents: JWT headers and claims sets, JWKS files.
///
/// Strict means: exactly one value with only whitespace around it; numbers, strings and
/// escapes exactly as the grammar says (every escape, `\uXXXX` surrogate pairs, no unescaped
/// control characters, UTF-8 only); an object that names a member twice is refused (RFC 7515
/// section 5.2 and RFC 7519 section 4 require that of JOSE headers and claims sets). The
/// document size and the nesting depth are limited, so hostile input costs bounded time and
/// stack. Errors are typed and carry the byte offset.
public struct JSONParser: Sendable {
    /// The largest document accepted, in bytes.
    public var maximumBytes: Int
    /// The deepest nesting of arrays and objects accepted (the top-level value is depth 1).
    public var maximumDepth: Int

    /// Creates a parser with the given limits (defaults: 1 MiB, depth 32).
    public init(maximumBytes: Int = 1 << 20, maximumDepth: Int = 32) {
        self.maximumBytes = maximumBytes
        self.maximumDepth = maximumDepth
    }

    /// Parses `bytes` as one JSON document.
    public func parse(_ bytes: some Collection<UInt8>) throws(JSONError) -> JSONValue {
        let result: Result<JSONValue, JSONError>? = bytes.withContiguousStorageIfAvailable { buffer in
            Result { () throws(JSONError) in try parse(buffer) }
        }
        if let result { return try result.get() }
        return try Array(bytes).withUnsafeBufferPointer { buffer throws(JSONError) in try parse(buffer) }
    }

    /// Parses the bytes of `buffer` as one JSON document (borrowed during the call).
    public func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(JSONError) -> JSONValue {
        guard buffer.count <= maximumBytes else { throw JSONError(.tooLarge, at: maximumBytes) }
        var cursor = JSONCursor(bytes: buffer, maximumDepth: maximumDepth)
        cursor.skipWhitespace()
        let value = try cursor.value(depth: 1)
        cursor.skipWhitespace()
        guard cursor.position == buffer.count else { throw JSONError(.trailingBytes, at: cursor.position) }
        return value
    }

    /// The length of the number literal starting at `start`, or `nil` if the bytes there do
    /// not start one (shared with `JSONNumber`).
    static func numberLength(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var index = start
        func digits() -> Int {
            let first = index
            while index < bytes.count, bytes[index] &- 0x30 < 10 { index += 1 }
            return index - first
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { return nil }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            return nil
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return nil }
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard digits() > 0 else { return nil }
        }
        return index - start
    }
}

/// The parser's position in a borrowed document.
struct JSONCursor {
    let bytes: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    var position = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
    }

    mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    /// The next byte, or `unexpectedEnd`.
    func peek() throws(JSONError) -> UInt8 {
        guard position < bytes.count else { throw JSONError(.unexpectedEnd, at: position) }
        return bytes[position]
    }

    mutating func value(depth: Int) throws(JSONError) -> JSONValue {
        switch try peek() {
        case UInt8(ascii: "{"): return .object(try object(depth: depth))
        case UInt8(ascii: "["): return .array(try array(depth: depth))
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw JSONError(.unexpectedByte, at: position)
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONError) {
        let count = word.utf8CodeUnitCount
        for index in 0..<count {
            guard position + index < bytes.count else { throw JSONError(.unexpectedEnd, at: bytes.count) }
            guard bytes[position + index] == word.utf8Start[index] else {
                throw JSONError(.unexpectedByte, at: position + index)
            }
        }
        position += count
    }

    mutating func number() throws(JSONError) -> JSONNumber {
        let start = position
        guard let length = JSONParser.numberLength(bytes, from: start) else {
            throw JSONError(.invalidNumber, at: start)
        }
        position += length
        // A digit or sign glued to the literal (`01`, `1.5.2`, `-`) is not a number.
        if position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "+"),
                UInt8(ascii: "-"), UInt8(ascii: "e"), UInt8(ascii: "E"):
                throw JSONError(.invalidNumber, at: start)
            default: break
            }
        }
        guard let number = JSONNumber(validLiteral: UnsafeBufferPointer(rebasing: bytes[start..<position]))
        else {
            throw JSONError(.invalidNumber, at: start)
        }
        return number
    }

    mutating func array(depth: Int) throws(JSONError) -> [JSONValue] {
        guard depth <= maximumDepth else { throw JSONError(.tooDeep, at: position) }
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") {
            position += 1
            return elements
        }
        while true {
            skipWhitespace()
            elements.append(try value(depth: depth + 1))
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return elements
            default: throw JSONError(.unexpectedByte, at: position)
            }
        }
    }

    mutating func object(depth: Int) throws(JSONError) -> JSONObject {
        guard depth <= maximumDepth else { throw JSONError(.tooDeep, at: position) }
        position += 1
        var members: [JSONObject.Member] = []
        members.reserveCapacity(8)
        var names: Set<String>?
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") {
            position += 1
            return JSONObject(members: members)
        }
        while true {
            skipWhitespace()
            let nameOffset = position
            guard try peek() == UInt8(ascii: "\"") else { throw JSONError(.unexpectedByte, at: position) }
            let name = try string()
            // Linear for the few members a JOSE header has; a set once an object grows.
            if members.count < 16 {
                if members.contains(where: { $0.name == name }) {
                    throw JSONError(.duplicateName, at: nameOffset)
                }
            } else {
                if names == nil { names = Set(members.map(\.name)) }
                guard names!.insert(name).inserted else { throw JSONError(.duplicateName, at: nameOffset) }
            }
            skipWhitespace()
            guard try peek() == UInt8(ascii: ":") else { throw JSONError(.unexpectedByte, at: position) }
            position += 1
            skipWhitespace()
            members.append(JSONObject.Member(name: name, value: try value(depth: depth + 1)))
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "}"):
                position += 1
                return JSONObject(members: members)
            default: throw JSONError(.unexpectedByte, at: position)
            }
        }
    }
}
