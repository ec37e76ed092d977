import HTTP1
import HTTPCore
import Testing

@Suite struct ChunkedTests {
    /// Decodes `input` fed at `cuts`; returns the data and how many bytes the body took.
    func decode(_ input: [UInt8], cuts: [Int] = []) throws(HTTP1Error) -> (data: [UInt8], consumed: Int) {
        var decoder = ChunkedDecoder(lineLimit: 64)
        var data: [UInt8] = []
        var consumed = 0
        var start = 0
        for cut in cuts + [input.count] where cut >= start {
            let piece = Array(input[start..<cut])
            let used = try decoder.decode(piece) { data += $0 }
            consumed += used
            start = cut
            if decoder.isComplete { break }
        }
        return (data, decoder.isComplete ? consumed : -1)
    }

    @Test func chunkSizeLinesAreLowerCaseHex() {
        var sizes = [1, 9, 10, 15, 16, 255, 256, 4096, 65535, 1 << 40, Int.max]
        let seed: UInt64 = 0x00C4_0C4E
        var generator = SplitMix64(seed: seed)
        for _ in 0..<1000 {
            sizes.append(
                Int.random(in: 1...Int.max, using: &generator) >> Int.random(in: 0...62, using: &generator))
        }
        for size in sizes where size > 0 {
            #expect(
                ChunkedEncoder.chunkHeader(size) == Array((String(size, radix: 16) + "\r\n").utf8),
                "size \(size), seed \(seed)")
        }
    }

    @Test func decodesAtEverySplit() throws {
        let body = Array(
            "5;ext=\"a;b\"\r\nhello\r\n1A\r\n\(String(repeating: "z", count: 26))\r\n0\r\nX-Trailer: 1\r\n\r\nNEXT"
                .utf8)
        let expected = Array(("hello" + String(repeating: "z", count: 26)).utf8)
        #expect(try decode(body).data == expected)
        #expect(try decode(body).consumed == body.count - 4)
        for cut in 1..<body.count {
            let result = try decode(body, cuts: [cut])
            #expect(result.data == expected)
            #expect(result.consumed == body.count - 4)
        }
    }

    /// Size lines with extensions RFC 9112 §7.1.1 allows: each is read and dropped, at every
    /// split point.
    static let validExtensions = [
        "5;a", "5;a=b", "5 ;a", "5\t; a", "5; a ; b", "5;a = b", "5;a= \"\"", "5;a=\"x y;z\"",
        "5;a=\"q\\\"\\\\\";b", "5;a=\"\u{E9}\"", "5;name=tok!#$%&'*+-.^_`|~;b=\"v\" ;c",
    ]

    @Test(arguments: validExtensions)
    func acceptsExtensionsAtEverySplit(_ line: String) throws {
        let body = Array((line + "\r\nhello\r\n0\r\n\r\n").utf8)
        for cut in 0..<body.count {
            let result = try decode(body, cuts: [cut])
            #expect(result.data == Array("hello".utf8), "\(line) cut at \(cut)")
            #expect(result.consumed == body.count)
        }
    }

    /// Extensions outside the grammar, with the offset of the byte that is refused: the same
    /// at every split point.
    static let invalidExtensions: [(String, Int)] = [
        ("5;", 2), ("5; ", 3), ("5;;a", 2), ("5;bad[=x", 5), ("5;a=", 4), ("5;a= ", 5), ("5;a=[", 4),
        ("5;a=b c", 6), ("5;a ", 4), ("5;a=b ", 6), ("5;a=\"x", 6), ("5;a=\"x\"y", 7), ("5;a=\"\u{1}\"", 5),
        ("5;a=\"\\\u{1}\"", 6), ("5;a=b=c", 5), ("5;a b", 4), ("5;=b", 2), ("5;a=\"x\" ", 8),
        ("5;\u{7F}", 2), ("5;a\u{C3}\u{A9}", 3),
    ]

    @Test(arguments: invalidExtensions)
    func refusesExtensionsAtEverySplit(_ line: String, _ offset: Int) {
        let body = Array((line + "\r\nhello\r\n0\r\n\r\n").utf8)
        for cut in 0..<body.count {
            #expect(throws: HTTP1Error(.invalidChunkExtension, at: offset), "\(line) cut at \(cut)") {
                try decode(body, cuts: [cut])
            }
        }
    }

    @Test func extensionsAreBoundedByTheLineLimit() throws {
        let fits = "5;" + String(repeating: "e", count: 61)  // 63 bytes, the CR makes 64
        #expect(try decode(Array((fits + "\r\nhello\r\n0\r\n\r\n").utf8)).data == Array("hello".utf8))
        let quoted = "5;a=\"" + String(repeating: " ", count: 70) + "\""
        #expect(throws: HTTP1Error(.invalidChunkExtension, at: 64)) {
            try decode(Array((quoted + "\r\nhello\r\n0\r\n\r\n").utf8))
        }
    }

    static let refused: [(String, HTTP1Error.Reason)] = [
        ("\r\n", .invalidChunkSize),
        ("g\r\n", .invalidChunkSize),
        ("-1\r\n", .invalidChunkSize),
        ("+5\r\nhello\r\n0\r\n\r\n", .invalidChunkSize),
        ("0x5\r\nhello\r\n0\r\n\r\n", .invalidChunkSize),
        ("5\nhello\r\n0\r\n\r\n", .invalidChunkSize),
        ("5 \r\nhello\r\n0\r\n\r\n", .invalidChunkSize),
        ("5\t\r\nhello\r\n0\r\n\r\n", .invalidChunkSize),
        ("5\r\rhello\r\n0\r\n\r\n", .invalidChunkSize),
        ("1000000000000000\r\n", .invalidChunkSize),
        ("5;a\nb\r\nhello\r\n0\r\n\r\n", .invalidChunkExtension),
        ("5;\u{0}\r\nhello\r\n0\r\n\r\n", .invalidChunkExtension),
        ("5;\(String(repeating: "e", count: 80))\r\nhello\r\n0\r\n\r\n", .invalidChunkExtension),
        ("5\r\nhelloX\r\n0\r\n\r\n", .invalidChunkTerminator),
        ("5\r\nhello\n0\r\n\r\n", .invalidChunkTerminator),
        ("5\r\nhello\r0\r\n\r\n", .invalidChunkTerminator),
        ("0\r\nX-A: 1\n\r\n", .invalidTrailer),
        ("0\r\n X-A: 1\r\n\r\n", .invalidTrailer),
        ("0\r\nNoColon\r\n\r\n", .invalidTrailer),
        ("0\r\nX-A: \u{1}\r\n\r\n", .invalidTrailer),
        ("0\r\n\n", .invalidTrailer),
    ]

    @Test(arguments: refused)
    func refusesMalformed(_ text: String, _ reason: HTTP1Error.Reason) {
        do {
            let result = try decode(Array(text.utf8))
            Issue.record("accepted: \(result)")
        } catch {
            #expect(error.reason == reason)
        }
    }

    @Test func encoderRoundTrips() throws {
        var sink = ByteArraySink()
        Array("hello".utf8).withUnsafeBytes { ChunkedEncoder.writeChunk($0, into: &sink) }
        [UInt8]().withUnsafeBytes { ChunkedEncoder.writeChunk($0, into: &sink) }
        Array(repeating: UInt8(0x41), count: 300).withUnsafeBytes {
            ChunkedEncoder.writeChunk($0, into: &sink)
        }
        ChunkedEncoder.writeEnd(into: &sink)
        #expect(sink.bytes.starts(with: Array("5\r\nhello\r\n12c\r\n".utf8)))
        let result = try decode(sink.bytes)
        #expect(result.data == Array("hello".utf8) + Array(repeating: 0x41, count: 300))
        #expect(result.consumed == sink.bytes.count)
    }
}
