/// The few DER (X.690) encodings ClientAuth hands to OpenSSL: SubjectPublicKeyInfo for RSA
/// and EC keys (RFC 5280 section 4.1, RFC 3279, RFC 5480) and the ECDSA signature structure.
enum DER {
    /// `rsaEncryption` (1.2.840.113549.1.1.1) with its NULL parameters.
    static let rsaAlgorithm: [UInt8] = [
        0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00,
    ]
    /// `id-ecPublicKey` (1.2.840.10045.2.1).
    static let ecPublicKey: [UInt8] = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    /// `prime256v1` (1.2.840.10045.3.1.7).
    static let p256: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
    /// `secp384r1` (1.3.132.0.34).
    static let p384: [UInt8] = [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22]

    /// Appends a tag, a definite length and the contents.
    static func append(tag: UInt8, _ contents: [UInt8], to out: inout [UInt8]) {
        out.append(tag)
        appendLength(contents.count, to: &out)
        out.append(contentsOf: contents)
    }

    /// Appends a definite length: short form below 128, else long form.
    static func appendLength(_ length: Int, to out: inout [UInt8]) {
        if length < 0x80 {
            out.append(UInt8(length))
            return
        }
        var bytes: [UInt8] = []
        var rest = length
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        out.append(0x80 | UInt8(bytes.count))
        out.append(contentsOf: bytes)
    }

    /// A non-negative INTEGER from big-endian magnitude bytes: leading zeros dropped, one
    /// zero added back where the top bit would otherwise read as a sign.
    static func unsignedInteger(_ magnitude: some Collection<UInt8>) -> [UInt8] {
        var digits = Array(magnitude.drop { $0 == 0 })
        if digits.isEmpty || digits[0] & 0x80 != 0 { digits.insert(0, at: 0) }
        var out: [UInt8] = []
        append(tag: 0x02, digits, to: &out)
        return out
    }

    /// SubjectPublicKeyInfo of an RSA public key (`n`, `e` big-endian).
    static func rsaPublicKeyInfo(modulus: [UInt8], exponent: [UInt8]) -> [UInt8] {
        var key: [UInt8] = []
        append(tag: 0x30, unsignedInteger(modulus) + unsignedInteger(exponent), to: &key)
        return publicKeyInfo(algorithm: rsaAlgorithm, key: key)
    }

    /// SubjectPublicKeyInfo of an EC public key: the uncompressed point `04 || x || y`.
    static func ecPublicKeyInfo(curve: [UInt8], x: [UInt8], y: [UInt8]) -> [UInt8] {
        var algorithm: [UInt8] = []
        append(tag: 0x30, ecPublicKey + curve, to: &algorithm)
        return publicKeyInfo(algorithm: algorithm, key: [0x04] + x + y)
    }

    private static func publicKeyInfo(algorithm: [UInt8], key: [UInt8]) -> [UInt8] {
        var bitString: [UInt8] = []
        append(tag: 0x03, [0x00] + key, to: &bitString)
        var out: [UInt8] = []
        append(tag: 0x30, algorithm + bitString, to: &out)
        return out
    }

    /// The `ECDSA-Sig-Value` SEQUENCE { r, s } for a JOSE signature `r || s` (RFC 7518
    /// section 3.4: each half exactly the curve's coordinate length).
    static func ecdsaSignature(joseSignature: UnsafeRawBufferPointer) -> [UInt8] {
        let half = joseSignature.count / 2
        let r = unsignedInteger(joseSignature[0..<half])
        let s = unsignedInteger(joseSignature[half...])
        var out: [UInt8] = []
        out.reserveCapacity(r.count + s.count + 3)
        append(tag: 0x30, r + s, to: &out)
        return out
    }
}
