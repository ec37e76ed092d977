/// A single forward pass over a header value of the form `token *( OWS ";" OWS parameter )`.
///
/// Never backtracks: every method consumes bytes or leaves the position where it was.
///
/// Reads the caller's bytes in place (an array or a slice of one: a header value inside the
/// buffer its head was parsed from); `index` counts from the value's first byte.
struct ParameterScanner {
    let bytes: ArraySlice<UInt8>
    /// `bytes.startIndex`: positions in `bytes` are `base + index`.
    private let base: Int
    private(set) var index: Int = 0

    init(_ value: some Collection<UInt8>) {
        if let slice = value as? ArraySlice<UInt8> {
            bytes = slice
        } else if let array = value as? [UInt8] {
            bytes = array[...]
        } else {
            bytes = ArraySlice(value)
        }
        base = bytes.startIndex
    }

    var isAtEnd: Bool { index >= bytes.count }

    var current: UInt8? { index < bytes.count ? bytes[base + index] : nil }

    mutating func advance() {
        index += 1
    }

    /// Skips spaces and tabs.
    mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 {
            index += 1
        }
    }

    /// Consumes `byte` if it is next.
    mutating func consume(_ byte: UInt8) -> Bool {
        guard current == byte else { return false }
        index += 1
        return true
    }

    /// Consumes the longest run of token characters (possibly empty).
    mutating func token() -> ArraySlice<UInt8> {
        let start = index
        while let byte = current, ByteClass.isTokenChar(byte) {
            index += 1
        }
        return bytes[(base + start)..<(base + index)]
    }

    /// Consumes a quoted string starting at the opening `"` and appends its unescaped content to
    /// `value` (a buffer the caller may keep from value to value, emptied by it).
    ///
    /// - Parameter escapesAnyByte: `true` reads `\x` as `x` for every byte (RFC 9110
    ///   quoted-pair); `false` only for `\"` and `\\`, keeping other backslashes literal as
    ///   browsers send them in file names.
    mutating func quotedString(escapesAnyByte: Bool, into value: inout [UInt8]) throws(HTTPCoreError) {
        let open = index
        index += 1
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"):
                if index + 1 < bytes.count,
                    escapesAnyByte || ByteClass.isQuotedPairTarget(bytes[base + index + 1])
                {
                    let escaped = bytes[base + index + 1]
                    guard !ByteClass.isForbiddenInFieldValue(escaped) else {
                        throw HTTPCoreError(.controlCharacter, at: index + 1)
                    }
                    value.append(escaped)
                    index += 2
                } else {
                    value.append(byte)
                    index += 1
                }
            default:
                // A run of plain bytes up to the next quote, backslash or forbidden byte is
                // appended in one copy.
                let start = index
                while let plain = current, plain != UInt8(ascii: "\""), plain != UInt8(ascii: "\\"),
                    !ByteClass.isForbiddenInFieldValue(plain)
                {
                    index += 1
                }
                guard index > start else { throw HTTPCoreError(.controlCharacter, at: index) }
                value.append(contentsOf: bytes[(base + start)..<(base + index)])
            }
        }
        throw HTTPCoreError(.unterminatedQuotedString, at: open)
    }

    /// Consumes an unquoted value up to the next `;` or the end, trimming trailing whitespace,
    /// and appends it to `value`.
    ///
    /// A `"` inside the value is an error: the value would read differently to a parser that
    /// expects quoting.
    mutating func unquotedValue(into value: inout [UInt8]) throws(HTTPCoreError) {
        let start = index
        var end = index
        while let byte = current, byte != UInt8(ascii: ";") {
            if byte == UInt8(ascii: "\"") {
                throw HTTPCoreError(.invalidParameter, at: index)
            }
            if ByteClass.isForbiddenInFieldValue(byte) {
                throw HTTPCoreError(.controlCharacter, at: index)
            }
            index += 1
            if byte != 0x20 && byte != 0x09 {
                end = index
            }
        }
        value.append(contentsOf: bytes[(base + start)..<(base + end)])
    }

    /// After a parameter value: optional whitespace, then `;` or the end.
    ///
    /// Returns `false` at the end of the input, `true` after consuming `;`.
    mutating func parameterSeparator() throws(HTTPCoreError) -> Bool {
        skipWhitespace()
        if isAtEnd { return false }
        guard consume(UInt8(ascii: ";")) else {
            throw HTTPCoreError(.junkAfterValue, at: index)
        }
        return true
    }

    /// The rest of the input from the current position.
    mutating func rest() -> ArraySlice<UInt8> {
        let slice = bytes[(base + index)...]
        index = bytes.count
        return slice
    }
}

/// One `name=value` parameter of a header value, with its name folded to lower case.
public struct HeaderParameter: Equatable, Sendable {
    /// The parameter name in lower case (names are case-insensitive).
    public var name: String
    /// The value after unquoting and unescaping.
    public var value: [UInt8]
    /// Whether the value was sent as a quoted string.
    public var wasQuoted: Bool

    /// Creates a parameter.
    public init(name: String, value: [UInt8], wasQuoted: Bool) {
        self.name = name
        self.value = value
        self.wasQuoted = wasQuoted
    }

    /// The value decoded as UTF-8.
    public var valueString: String { String(decoding: value, as: UTF8.self) }
}

extension ArraySlice<UInt8> {
    var lowercasedASCIIString: String {
        let count = self.count
        return withUnsafeBufferPointer { source in
            // Folds ASCII only; other bytes pass as they are (and are decoded as UTF-8).
            String(unsafeUninitializedCapacity: count) { target in
                for index in 0..<count { target[index] = source[index].asciiLowercased }
                return count
            }
        }
    }
}
