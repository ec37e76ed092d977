/// Four-character codes (a PNG chunk type, a RIFF fourcc, an ISO BMFF box or item type) as
/// the big-endian integer of their four bytes.
enum FourCC {
    /// The code of a four-byte literal.
    static func of(_ code: StaticString) -> UInt32 {
        precondition(code.utf8CodeUnitCount == 4, "a four-character code has four bytes")
        let bytes = code.utf8Start
        return UInt32(bytes[0]) << 24 | UInt32(bytes[1]) << 16 | UInt32(bytes[2]) << 8 | UInt32(bytes[3])
    }

    /// The code's four bytes.
    static func bytes(_ code: UInt32) -> [UInt8] {
        [UInt8(code >> 24), UInt8(code >> 16 & 0xFF), UInt8(code >> 8 & 0xFF), UInt8(code & 0xFF)]
    }

    /// The code as text (its bytes as UTF-8, for names in `stripped`).
    static func string(_ code: UInt32) -> String {
        String(decoding: bytes(code), as: UTF8.self)
    }
}
