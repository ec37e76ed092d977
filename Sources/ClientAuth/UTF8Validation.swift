/// Whether `bytes` are well-formed UTF-8 (Unicode Table 3-7: shortest forms only, no
/// surrogates, nothing above U+10FFFF).
///
/// The JSON parser's own check, so that a string costs one pass and one
/// `String(decoding:as:)` (which is specialised and, on valid input, copies only);
/// `String(validating:as:)` is generic over its input and instantiates type metadata at run
/// time on every call.
func isWellFormedUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var index = 0
    let count = bytes.count
    while index < count {
        let lead = bytes[index]
        if lead < 0x80 {
            index += 1
            continue
        }
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: (length, low) = (3, 0xA0)
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: (length, high) = (3, 0x9F)
        case 0xF0: (length, low) = (4, 0x90)
        case 0xF1...0xF3: length = 4
        case 0xF4: (length, high) = (4, 0x8F)
        default: return false
        }
        guard index + length <= count else { return false }
        // The second byte has the lead's own range; the others are plain continuations.
        guard low...high ~= bytes[index + 1] else { return false }
        for offset in 2..<length where !(0x80...0xBF ~= bytes[index + offset]) { return false }
        index += length
    }
    return true
}
