import HTTPCore
import Testing

/// `ContentDisposition.appendQuoted` skips runs with nothing to escape eight bytes at a time:
/// its output is the byte-by-byte escaping (`"` → `%22`, CR → `%0D`, LF → `%0A`, `\` → `\\`) for
/// every length and every position of a special byte, and for seeded random values.
@Suite struct QuotedValueTests {
    static let seed: UInt64 = 0x0051_07ED

    static func reference(_ value: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x22]
        for byte in value {
            switch byte {
            case 0x22: out += Array("%22".utf8)
            case 0x0D: out += Array("%0D".utf8)
            case 0x0A: out += Array("%0A".utf8)
            case 0x5C: out += [0x5C, 0x5C]
            default: out.append(byte)
            }
        }
        return out + [0x22]
    }

    static func quoted(_ value: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        ContentDisposition.appendQuoted(value, to: &out)
        return out
    }

    @Test func everySpecialByteAtEveryPosition() {
        for length in 0...40 {
            #expect(
                Self.quoted([UInt8](repeating: 0x61, count: length))
                    == Self.reference([UInt8](repeating: 0x61, count: length)))
            for position in 0..<length {
                for special: UInt8 in [0x22, 0x0D, 0x0A, 0x5C, 0x00, 0x0E, 0x7F, 0xFF] {
                    var value = [UInt8](repeating: 0x61, count: length)
                    value[position] = special
                    #expect(
                        Self.quoted(value) == Self.reference(value),
                        "length \(length) at \(position): \(special)")
                }
            }
        }
    }

    @Test func seededValuesMatchTheByteByByteEscaping() {
        var random = SplitMix64(seed: Self.seed)
        let alphabet: [UInt8] = [0x22, 0x0D, 0x0A, 0x5C, 0x09, 0x20, 0x61, 0x2E, 0xC3, 0xA9, 0x0F, 0x21]
        for _ in 0..<5_000 {
            let value = (0..<Int(random.next() % 64)).map { _ in
                random.next() % 3 == 0
                    ? alphabet[Int(random.next() % UInt64(alphabet.count))]
                    : UInt8(truncatingIfNeeded: random.next())
            }
            #expect(Self.quoted(value) == Self.reference(value), "seed \(Self.seed): \(value)")
        }
    }
}
