import CCrypto

/// A SHA-256 digest as a dictionary key.
struct KeyDigest: Hashable, Sendable {
    var bytes: (UInt64, UInt64, UInt64, UInt64)

    init(hashing key: [UInt8]) {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let status = EVP_Digest(key, key.count, &digest, &length, MessageDigest.sha256.evp, nil)
        precondition(status == 1 && length == 32, "OpenSSL could not compute SHA-256")
        self.init(digest)
    }

    /// Parses 64 hex digits.
    init?(hex: ArraySlice<UInt8>) {
        guard hex.count == 64 else { return nil }
        var digest: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            guard let high = Self.hexValue(hex[index]), let low = Self.hexValue(hex[index + 1]) else {
                return nil
            }
            digest.append(high << 4 | low)
            index += 2
        }
        self.init(digest)
    }

    private init(_ digest: [UInt8]) {
        func word(_ at: Int) -> UInt64 {
            digest[at..<(at + 8)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        bytes = (word(0), word(8), word(16), word(24))
    }

    /// Equality that looks at every bit whatever the first difference.
    func constantTimeEquals(_ other: KeyDigest) -> Bool {
        ((bytes.0 ^ other.bytes.0) | (bytes.1 ^ other.bytes.1) | (bytes.2 ^ other.bytes.2)
            | (bytes.3 ^ other.bytes.3)) == 0
    }

    static func == (lhs: KeyDigest, rhs: KeyDigest) -> Bool { lhs.constantTimeEquals(rhs) }

    func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.0)
        hasher.combine(bytes.1)
        hasher.combine(bytes.2)
        hasher.combine(bytes.3)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
