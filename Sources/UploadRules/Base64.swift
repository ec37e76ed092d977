/// Base64 encodings used by upload tokens.
public enum Base64 {
    private static let standard = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlSafe = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// URL-safe base64 (`-` and `_`), padding kept, as Qiniu's tokens use it.
    public static func urlSafeEncoded(_ bytes: [UInt8]) -> String {
        encode(bytes, alphabet: urlSafe)
    }

    /// Standard base64 with padding.
    public static func encoded(_ bytes: [UInt8]) -> String {
        encode(bytes, alphabet: standard)
    }

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            for shift in [18, 12, 6, 0] { out.append(alphabet[Int((value >> UInt32(shift)) & 63)]) }
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            var value = UInt32(bytes[index]) << 16
            if rest == 2 { value |= UInt32(bytes[index + 1]) << 8 }
            out.append(alphabet[Int((value >> 18) & 63)])
            out.append(alphabet[Int((value >> 12) & 63)])
            out.append(rest == 2 ? alphabet[Int((value >> 6) & 63)] : UInt8(ascii: "="))
            out.append(UInt8(ascii: "="))
        }
        return String(decoding: out, as: UTF8.self)
    }
}
