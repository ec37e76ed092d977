/// base64url decoding (RFC 4648 section 5) as JWS compact serialisation uses it (RFC 7515
/// section 2): no padding, no whitespace, only `A-Z a-z 0-9 - _`, and canonical: the unused
/// low bits of the last character must be zero, so every byte string has exactly one encoding.
public enum Base64URL {
    /// The value of each alphabet byte, 0xFF for bytes outside the alphabet.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    /// How many bytes `encodedCount` characters decode to, or `nil` if no canonical
    /// unpadded encoding has that length (a remainder of 1 modulo 4).
    public static func decodedCount(_ encodedCount: Int) -> Int? {
        switch encodedCount % 4 {
        case 0: return encodedCount / 4 * 3
        case 2: return encodedCount / 4 * 3 + 1
        case 3: return encodedCount / 4 * 3 + 2
        default: return nil
        }
    }

    /// Decodes `input` into `output` (which must hold `decodedCount(input.count)` bytes);
    /// returns the number of bytes written, or `nil` if `input` is not canonical unpadded
    /// base64url.
    public static func decode(
        _ input: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>
    )
        -> Int?
    {
        guard let count = decodedCount(input.count), output.count >= count else { return nil }
        return values.withUnsafeBufferPointer { table -> Int? in
            var written = 0
            var index = 0
            var invalid: UInt8 = 0
            while index + 4 <= input.count {
                let a = table[Int(input[index])]
                let b = table[Int(input[index + 1])]
                let c = table[Int(input[index + 2])]
                let d = table[Int(input[index + 3])]
                invalid |= (a | b | c | d) & 0xC0
                output[written] = a << 2 | b >> 4
                output[written + 1] = b << 4 | c >> 2
                output[written + 2] = c << 6 | d
                written += 3
                index += 4
            }
            let remainder = input.count - index
            if remainder >= 2 {
                let a = table[Int(input[index])]
                let b = table[Int(input[index + 1])]
                invalid |= (a | b) & 0xC0
                output[written] = a << 2 | b >> 4
                written += 1
                if remainder == 3 {
                    let c = table[Int(input[index + 2])]
                    invalid |= c & 0xC0
                    output[written] = b << 4 | c >> 2
                    written += 1
                    if c & 0x03 != 0 { return nil }
                } else if b & 0x0F != 0 {
                    return nil
                }
            }
            return invalid == 0 ? written : nil
        }
    }

    /// Decodes `input` into a new array, or `nil` if it is not canonical unpadded base64url.
    public static func decode(_ input: some Collection<UInt8>) -> [UInt8]? {
        let bytes = Array(input)
        guard let count = decodedCount(bytes.count) else { return nil }
        var output = [UInt8](repeating: 0, count: count)
        let written = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { output in decode(input, into: output) }
        }
        return written == nil ? nil : output
    }
}
