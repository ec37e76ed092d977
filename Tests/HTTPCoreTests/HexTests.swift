import HTTPCore
import Testing

@Suite struct HexTests {
    /// A generator that returns fixed words in turn.
    struct Fixed: RandomNumberGenerator {
        var words: [UInt64]
        mutating func next() -> UInt64 { words.removeFirst() }
    }

    @Test func randomWordsAreSixteenDigitsLowNibbleFirst() {
        var generator = Fixed(words: [0x0123_4567_89AB_CDEF, 0xF])
        #expect(Hex.random(words: 2, using: &generator) == "fedcba9876543210f000000000000000")
        var out = Array("x".utf8)
        var one = Fixed(words: [0xA5])
        Hex.appendRandom(words: 1, to: &out, using: &one)
        #expect(String(decoding: out, as: UTF8.self) == "x5a00000000000000")
    }

    @Test func bytesAreTwoDigitsHighNibbleFirst() {
        #expect(Hex.encode([0x00, 0x01, 0xAB, 0xFF]) == "0001abff")
        #expect(Hex.encode([UInt8]()) == "")
    }
}
