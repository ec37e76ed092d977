/// Character classes of RFC 9110 and RFC 2046 over bytes, as 256-entry lookup tables.
public enum ByteClass {
    /// `tchar` of RFC 9110 §5.6.2: the characters of a token (header names, parameter names).
    @inlinable
    public static func isTokenChar(_ byte: UInt8) -> Bool {
        inMask(byte, low: tokenLow, high: tokenHigh)
    }

    /// `bchars` of RFC 2046 §5.1.1: the characters allowed in a multipart boundary.
    @inlinable
    public static func isBoundaryChar(_ byte: UInt8) -> Bool {
        inMask(byte, low: boundaryLow, high: boundaryHigh)
    }

    /// `unreserved` of RFC 3986 §2.3: bytes a URI means the same whether sent raw or
    /// percent-encoded (ALPHA DIGIT `-` `.` `_` `~`).
    @inlinable
    public static func isUnreserved(_ byte: UInt8) -> Bool {
        inMask(byte, low: unreservedLow, high: unreservedHigh)
    }

    /// `pchar` of RFC 3986 §3.3 without `pct-encoded`: unreserved, sub-delims, `:` and `@`,
    /// the bytes a path segment may carry raw.
    @inlinable
    public static func isPathChar(_ byte: UInt8) -> Bool {
        inMask(byte, low: pathLow, high: pathHigh)
    }

    /// The bytes a query may carry raw: RFC 3986 §3.4's `pchar`, `/`, `?` and `%`, plus the
    /// brackets, braces, `|`, `^` and backtick that browsers leave unencoded (WHATWG's query
    /// percent-encode set); never a quote, `<`, `>`, a backslash or `#`.
    @inlinable
    public static func isQueryChar(_ byte: UInt8) -> Bool {
        inMask(byte, low: queryLow, high: queryHigh)
    }

    /// True for bytes that may never appear in a header value: NUL, CR, LF and the other
    /// controls except horizontal tab, and DEL.
    @inlinable
    public static func isForbiddenInFieldValue(_ byte: UInt8) -> Bool {
        (byte < 0x20 && byte != 0x09) || byte == 0x7F
    }

    /// The position of the first byte forbidden in a field value in `base[start..<end]`, or
    /// `end`. Eight bytes at a time while a word holds no byte under 0x20 and no DEL; a word
    /// that does (a tab among them) is read byte by byte.
    @inlinable
    public static func firstForbiddenInFieldValue(_ base: UnsafePointer<UInt8>, from start: Int, to end: Int)
        -> Int
    {
        var position = start
        while end - position >= 8 {
            let word = UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self)
            if Word.hasByte(below: 0x20, in: word) || Word.hasByte(0x7F, in: word) { break }
            position += 8
        }
        while position < end, !isForbiddenInFieldValue(base[position]) { position += 1 }
        return position
    }

    /// Tests on eight bytes at once (a little-endian word loaded from a buffer). Exact as
    /// answers: a borrow can mark a byte above a true one, never a word without one.
    public enum Word {
        @usableFromInline static var ones: UInt64 { 0x0101_0101_0101_0101 }
        @usableFromInline static var highs: UInt64 { 0x8080_8080_8080_8080 }

        /// Whether a byte of `word` is under `bound` (at most 0x80).
        @inlinable
        public static func hasByte(below bound: UInt8, in word: UInt64) -> Bool {
            (word &- UInt64(bound) &* ones) & ~word & highs != 0
        }

        /// Whether a byte of `word` is `byte`.
        @inlinable
        public static func hasByte(_ byte: UInt8, in word: UInt64) -> Bool {
            hasByte(below: 1, in: word ^ (UInt64(byte) &* ones))
        }
    }

    /// The characters after which a backslash in a quoted `Content-Disposition` value is
    /// read as an escape. Browsers send backslashes raw (`C:\Users\a.txt`), so any other
    /// backslash stays literal; `\"` and `\\` are escapes, as PHP, Python and Werkzeug
    /// read them.
    @inlinable
    public static func isQuotedPairTarget(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Membership of an ASCII byte in a 128-bit set given as two 64-bit words.
    @inlinable
    static func inMask(_ byte: UInt8, low: UInt64, high: UInt64) -> Bool {
        byte < 64 ? (low >> UInt64(byte)) & 1 == 1 : byte < 128 ? (high >> UInt64(byte - 64)) & 1 == 1 : false
    }

    // Token: ALPHA DIGIT ! # $ % & ' * + - . ^ _ ` | ~
    @usableFromInline static let tokenLow: UInt64 = 0x03FF_6CFA_0000_0000
    @usableFromInline static let tokenHigh: UInt64 = 0x57FF_FFFF_C7FF_FFFE
    // unreserved: ALPHA DIGIT - . _ ~
    @usableFromInline static let unreservedLow: UInt64 = 0x03FF_6000_0000_0000
    @usableFromInline static let unreservedHigh: UInt64 = 0x47FF_FFFE_87FF_FFFE
    // pchar without pct-encoded: unreserved ! $ & ' ( ) * + , ; = : @
    @usableFromInline static let pathLow: UInt64 = 0x2FFF_7FD2_0000_0000
    @usableFromInline static let pathHigh: UInt64 = 0x47FF_FFFE_87FF_FFFF
    // query: pchar / ? % [ ] { } | ^ `
    @usableFromInline static let queryLow: UInt64 = 0xAFFF_FFF2_0000_0000
    @usableFromInline static let queryHigh: UInt64 = 0x7FFF_FFFF_EFFF_FFFF
    // bchars: ALPHA DIGIT ' ( ) + _ , - . / : = ? and space
    @usableFromInline static let boundaryLow: UInt64 = 0xA7FF_FB81_0000_0000
    @usableFromInline static let boundaryHigh: UInt64 = 0x07FF_FFFE_87FF_FFFE
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
    // Both sides are contiguous on every hot path (buffers, array slices, string literals'
    // UTF-8): compare raw bytes, folding case only where they differ.
    let fast = lhs.withContiguousStorageIfAvailable { left in
        rhs.withContiguousStorageIfAvailable { right in asciiCaseInsensitiveEquals(left, right) }
    }
    if let fast, let fast { return fast }
    return zip(lhs, rhs).allSatisfy { $0.asciiLowercased == $1.asciiLowercased }
}

/// `asciiCaseInsensitiveEquals` against a literal (a header or parameter name): a plain loop,
/// no closures and no generics on the hot paths that compare names.
@inlinable
public func asciiCaseInsensitiveEquals(_ lhs: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
    asciiCaseInsensitiveEquals(
        lhs, UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
}

/// `asciiCaseInsensitiveEquals` of part of an array against a literal.
@inlinable
public func asciiCaseInsensitiveEquals(_ lhs: ArraySlice<UInt8>, _ literal: StaticString) -> Bool {
    lhs.withUnsafeBufferPointer { asciiCaseInsensitiveEquals($0, literal) }
}

/// `asciiCaseInsensitiveEquals` over two buffers of the same length.
@inlinable
func asciiCaseInsensitiveEquals(_ left: UnsafeBufferPointer<UInt8>, _ right: UnsafeBufferPointer<UInt8>)
    -> Bool
{
    guard left.count == right.count else { return false }
    guard var l = left.baseAddress, var r = right.baseAddress else { return true }
    let end = l + left.count
    // Names nearly always come in the case they are compared against: eight bytes at a time
    // while they are equal as they are, then byte by byte with case folded.
    while end - l >= 8,
        UnsafeRawPointer(l).loadUnaligned(as: UInt64.self)
            == UnsafeRawPointer(r).loadUnaligned(as: UInt64.self)
    {
        l += 8
        r += 8
    }
    while l < end {
        let a = l.pointee
        let b = r.pointee
        if a != b, a.asciiLowercased != b.asciiLowercased { return false }
        l += 1
        r += 1
    }
    return true
}
