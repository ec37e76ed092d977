import ClientAuth
import Testing

@Suite struct Base64URLTests {
    func decode(_ text: String) -> [UInt8]? { Base64URL.decode(Array(text.utf8)) }

    @Test func decodesRFC4648Vectors() {
        // RFC 4648 section 10, without padding.
        let vectors = [
            "": "", "Zg": "f", "Zm8": "fo", "Zm9v": "foo", "Zm9vYg": "foob", "Zm9vYmE": "fooba",
            "Zm9vYmFy": "foobar",
        ]
        for (encoded, plain) in vectors {
            #expect(decode(encoded) == Array(plain.utf8), "\(encoded)")
        }
    }

    @Test func usesTheURLAlphabet() {
        #expect(decode("-_8") == [0xFB, 0xFF])
        #expect(decode("+/8") == nil)
    }

    @Test(arguments: [
        "Zg==", "Zg=", "Zm8=", "Z g", "Zg\n", " Zg", "Zm9v\r\n", "Z", "Zm9vY", "Zm9v!", "Zm\u{00}9",
    ])
    func refusesPaddingWhitespaceAndBadLengths(_ text: String) {
        #expect(decode(text) == nil, "\(text.debugDescription)")
    }

    @Test func refusesNonCanonicalTrailingBits() {
        // "Zg" is canonical for "f"; "Zh" carries set bits past the last byte.
        #expect(decode("Zg") == [0x66])
        for text in ["Zh", "Zi", "Zv"] { #expect(decode(text) == nil, "\(text)") }
        #expect(decode("Zm8") == [0x66, 0x6F])
        for text in ["Zm9", "Zm-"] { #expect(decode(text) == nil, "\(text)") }
    }

    @Test func roundTripsEveryByteAtEveryLength() {
        var bytes: [UInt8] = []
        for length in 0..<300 {
            #expect(decode(base64url(bytes)) == bytes)
            bytes.append(UInt8(truncatingIfNeeded: length &* 151 &+ 7))
        }
    }

    @Test func decodedCountFollowsTheLength() {
        #expect(Base64URL.decodedCount(0) == 0)
        #expect(Base64URL.decodedCount(1) == nil)
        #expect(Base64URL.decodedCount(2) == 1)
        #expect(Base64URL.decodedCount(3) == 2)
        #expect(Base64URL.decodedCount(43) == 32)
    }
}
