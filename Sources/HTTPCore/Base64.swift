/// Base64 (RFC 4648): standard with padding (tus headers, upload policies) and URL-safe with
/// padding (Qiniu's tokens); strict decoding of the standard form.
public enum Base64 {
    private static let standard = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlSafe = Array(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }

    /// Decodes padded standard Base64; nil for anything else (wrong length, stray bytes, bits
    /// set after the last byte).
    public static func decoded(_ text: some Collection<UInt8>) -> [UInt8]? {
        let input = Array(text)
        guard input.count % 4 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(input.count / 4 * 3)
        var index = 0
        while index < input.count {
            let isLast = index + 4 == input.count
            let c0 = input[index]
            let c1 = input[index + 1]
            let c2 = input[index + 2]
            let c3 = input[index + 3]
            guard let v0 = value(of: c0), let v1 = value(of: c1) else { return nil }
            out.append(v0 << 2 | v1 >> 4)
            if c2 == UInt8(ascii: "=") {
                guard isLast, c3 == UInt8(ascii: "="), v1 & 0x0F == 0 else { return nil }
                break
            }
            guard let v2 = value(of: c2) else { return nil }
            out.append((v1 & 0x0F) << 4 | v2 >> 2)
            if c3 == UInt8(ascii: "=") {
                guard isLast, v2 & 0x03 == 0 else { return nil }
                break
            }
            guard let v3 = value(of: c3) else { return nil }
            out.append((v2 & 0x03) << 6 | v3)
            index += 4
        }
        return out
    }

    /// Standard Base64 with padding.
    public static func encoded(_ bytes: [UInt8]) -> String {
        encode(bytes, alphabet: standard)
    }

    /// URL-safe Base64 (`-` and `_`), padding kept, as Qiniu's tokens use it.
    public static func urlSafeEncoded(_ bytes: [UInt8]) -> String {
        encode(bytes, alphabet: urlSafe)
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
