/// Character classes of RFC 9110 and RFC 2046 over bytes, as 256-entry lookup tables.
public enum ByteClass {
    /// `tchar` of RFC 9110 §5.6.2: the characters of a token (header names, parameter names).
    @inlinable
    public static func isTokenChar(_ byte: UInt8) -> Bool {
        tokenTable[Int(byte)]
    }

    /// `bchars` of RFC 2046 §5.1.1: the characters allowed in a multipart boundary.
    @inlinable
    public static func isBoundaryChar(_ byte: UInt8) -> Bool {
        boundaryTable[Int(byte)]
    }

    /// True for bytes that may never appear in a header value: NUL, CR, LF and the other
    /// controls except horizontal tab, and DEL.
    @inlinable
    public static func isForbiddenInFieldValue(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x09) || byte == 0x7F
    }

    /// The characters after which a backslash in a quoted `Content-Disposition` value is
    /// read as an escape. Browsers send backslashes raw (`C:\Users\a.txt`), so any other
    /// backslash stays literal; `\"` and `\\` are escapes, as PHP, Python and Werkzeug
    /// read them.
    @inlinable
    public static func isQuotedPairTarget(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    @usableFromInline
    static let tokenTable: [Bool] = (0..<256).map { value in
        let byte = UInt8(value)
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    @usableFromInline
    static let boundaryTable: [Bool] = (0..<256).map { value in
        let byte = UInt8(value)
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return Array("'()+_,-./:=? ".utf8).contains(byte)
        }
    }
}

extension UInt8 {
    /// The byte with ASCII letters folded to lower case.
    @inlinable
    public var asciiLowercased: UInt8 {
        self >= 0x41 && self <= 0x5A ? self | 0x20 : self
    }
}

/// Compares two byte sequences ignoring ASCII case (header and parameter names).
@inlinable
public func asciiCaseInsensitiveEquals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>)
    -> Bool
{
    guard lhs.count == rhs.count else { return false }
    return zip(lhs, rhs).allSatisfy { $0.asciiLowercased == $1.asciiLowercased }
}
