/// Hexadecimal: lower case for digests, random request ids, boundaries and template values;
/// upper case for percent-escapes (RFC 3986 §2.1); either case read back.
public enum Hex {
    /// `0`–`9`, `a`–`f`.
    public static let digits = Array("0123456789abcdef".utf8)
    /// `0`–`9`, `A`–`F`.
    public static let upperDigits = Array("0123456789ABCDEF".utf8)

    /// The value of one hex digit of either case, or nil.
    @inline(__always)
    public static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The byte two hex digits spell (`high` first), or nil when either is not a digit.
    public static func value(high: UInt8, low: UInt8) -> UInt8? {
        guard let high = value(of: high), let low = value(of: low) else { return nil }
        return high << 4 | low
    }

    /// Appends `%XX` for `byte`, upper case.
    public static func appendPercentEscaped(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "%"))
        out.append(upperDigits[Int(byte >> 4)])
        out.append(upperDigits[Int(byte & 15)])
    }

    /// Appends `words` random 64-bit words as 16 digits each, low nibble first.
    public static func appendRandom(
        words: Int, to out: inout [UInt8], using generator: inout some RandomNumberGenerator
    ) {
        for _ in 0..<words {
            var word = generator.next() as UInt64
            for _ in 0..<16 {
                out.append(digits[Int(word & 15)])
                word >>= 4
            }
        }
    }

    /// `words` random 64-bit words as a string of 16 digits each.
    /// (The digits are written into the string's own storage: one allocation, not an array
    /// and then a string, per request id.)
    public static func random(words: Int, using generator: inout some RandomNumberGenerator) -> String {
        String(unsafeUninitializedCapacity: 16 * words) { out in
            for index in 0..<words {
                var word = generator.next() as UInt64
                for digit in 0..<16 {
                    out[16 * index + digit] = digits[Int(word & 15)]
                    word >>= 4
                }
            }
            return 16 * words
        }
    }

    /// `bytes` as two digits each, high nibble first.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `encode(_:)` of contiguous bytes, written straight into the string's storage (one
    /// allocation, none for 7 bytes or fewer).
    public static func encode(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { out in
            for (index, byte) in bytes.enumerated() {
                out[2 * index] = digits[Int(byte >> 4)]
                out[2 * index + 1] = digits[Int(byte & 15)]
            }
            return bytes.count * 2
        }
    }
}
