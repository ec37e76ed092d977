import HTTPCore
import Testing

@Suite struct RequestIDTests {
    /// A generator that repeats a fixed list of words.
    struct Replay: RandomNumberGenerator {
        var words: [UInt64]
        var index = 0
        mutating func next() -> UInt64 {
            defer { index += 1 }
            return words[index % words.count]
        }
    }

    @Test func randomIdsAreTheDigitsHexWrites() {
        for words in [[0, 0], [0x0123_4567_89AB_CDEF, UInt64.max], [42, 1 << 63]] as [[UInt64]] {
            var generator = Replay(words: words)
            let id = RequestID(using: &generator)
            var expected: [UInt8] = []
            var again = Replay(words: words)
            Hex.appendRandom(words: 2, to: &expected, using: &again)
            #expect(id.bytes == expected)
            #expect(id.byteCount == 32)
            #expect(id.description == String(decoding: expected, as: UTF8.self))
            var out = Array("X-Request-Id: ".utf8)
            id.append(to: &out)
            #expect(out == Array("X-Request-Id: ".utf8) + expected)
        }
    }

    @Test func clientIdsAreKeptAsSentWithinTheLimit() {
        let head = Array("abc-123\u{E9}".utf8)
        let id = RequestID(client: head[...])
        #expect(id?.bytes == head)
        #expect(id?.description == "abc-123\u{E9}")
        #expect(RequestID(client: [][...]) == nil)
        #expect(RequestID(client: Array(repeating: 0x61, count: 201)[...]) == nil)
        #expect(RequestID(client: Array(repeating: 0x61, count: 200)[...])?.byteCount == 200)
        #expect(RequestID(client: head[...], maximumBytes: 3) == nil)
    }
}
