/// Lower-case hexadecimal: digests, random request ids, boundaries and template values.
public enum Hex {
    /// `0`–`9`, `a`–`f`.
    public static let digits = Array("0123456789abcdef".utf8)

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
    public static func random(words: Int, using generator: inout some RandomNumberGenerator) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(16 * words)
        appendRandom(words: words, to: &out, using: &generator)
        return String(decoding: out, as: UTF8.self)
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
}
