import HTTPCore
import MultipartEncoding
import Testing

@testable import MultipartParsing

/// `parse(encode(parts)) == parts` for random parts whose content is dense in CR, LF, `-`
/// and prefixes of the delimiter, under random read splits.
@Suite struct RoundTripTests {
    struct Part: Equatable {
        var name: [UInt8]
        var filename: [UInt8]?
        var contentType: String?
        var content: [UInt8]
    }

    static func randomText(_ generator: inout SeededGenerator, alphabet: [UInt8], maxCount: Int) -> [UInt8] {
        (0..<Int.random(in: 0...maxCount, using: &generator)).map { _ in
            alphabet.randomElement(using: &generator)!
        }
    }

    static func randomContent(_ generator: inout SeededGenerator, boundary: [UInt8]) -> [UInt8] {
        let delimiter = Array("\r\n--".utf8) + boundary
        var content: [UInt8] = []
        let pieces = Int.random(in: 0...24, using: &generator)
        for _ in 0..<pieces {
            switch Int.random(in: 0..<6, using: &generator) {
            case 0: content += delimiter[..<Int.random(in: 1..<delimiter.count, using: &generator)]
            case 1: content += Array("X--".utf8) + boundary  // the boundary, not at a line start
            case 2: content += [0x0D, 0x0A, 0x2D, 0x2D]
            case 3: content.append([0x0D, 0x0A, 0x2D].randomElement(using: &generator)!)
            case 4:
                content += (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            default: content += Array("\n--\(String(decoding: boundary.prefix(3), as: UTF8.self))\r".utf8)
            }
        }
        // A whole delimiter at a line start cannot be content (RFC 2046); the random boundary
        // is what keeps real content from containing one.
        let lineDelimiter = Array("\n--".utf8) + boundary
        while let range = content.firstRange(of: lineDelimiter) { content.remove(at: range.lowerBound) }
        return content
    }

    static func randomParts(_ generator: inout SeededGenerator, boundary: [UInt8]) -> [Part] {
        let nameAlphabet = Array("abcXYZ019 ;=\\'/_-.:é".utf8)
        return (0..<Int.random(in: 0...6, using: &generator)).map { _ in
            let isFile = Bool.random(using: &generator)
            return Part(
                name: randomText(&generator, alphabet: nameAlphabet, maxCount: 12),
                filename: isFile ? randomText(&generator, alphabet: nameAlphabet, maxCount: 20) : nil,
                contentType: isFile
                    ? ["image/png", "application/octet-stream", "text/plain; charset=utf-8"].randomElement(
                        using: &generator) : nil,
                content: randomContent(&generator, boundary: boundary))
        }
    }

    @Test(arguments: 0..<200)
    func roundTrip(seed: Int) throws {
        var generator = SeededGenerator(seed: UInt64(seed))
        let boundary = Boundary.random(using: &generator)
        let parts = Self.randomParts(&generator, boundary: boundary.bytes)
        var sink = ByteArraySink()
        var encoder = MultipartEncoder(boundary: boundary)
        for part in parts {
            var headers = HeaderFields()
            if let type = part.contentType { headers.append(name: "Content-Type", value: type) }
            try encoder.beginPart(
                ContentDisposition(name: part.name, filename: part.filename), headers: headers, into: &sink)
            part.content.withUnsafeBytes { encoder.writeBody($0, into: &sink) }
        }
        try encoder.finish(into: &sink)

        var cuts: [Int] = []
        if sink.bytes.count > 1 {
            cuts = (0..<Int.random(in: 0...8, using: &generator)).map { _ in
                Int.random(in: 1..<sink.bytes.count, using: &generator)
            }.sorted()
        }
        let result = parse(sink.bytes, boundary: boundary.bytes, cuts: cuts)
        #expect(result.error == nil)
        #expect(result.anomalies == [])
        let decoded = result.parts.map {
            Part(
                name: $0.head.name, filename: $0.head.filename, contentType: $0.head.headers["Content-Type"],
                content: $0.content)
        }
        #expect(decoded == parts)
    }

    @Test func carryBetweenReadsStaysBelowTheDelimiterLength() throws {
        var generator = SeededGenerator(seed: 99)
        let boundary = try Boundary("b0undary")
        var content: [UInt8] = []
        for _ in 0..<400 { content += Self.randomContent(&generator, boundary: boundary.bytes) }
        var input = Array("--b0undary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n".utf8)
        input += content + Array("\r\n--b0undary--\r\n".utf8)
        var parser = try MultipartParser(boundary: boundary.bytes)
        var collector = Collector()
        let limit = Array("\r\n--b0undary".utf8).count - 1
        var start = 0
        while start < input.count {
            let end = min(input.count, start + Int.random(in: 1...17, using: &generator))
            try parser.feed(Array(input[start..<end]), into: &collector)
            #expect(parser.carryMatched + (parser.carryCR ? 1 : 0) <= limit)
            start = end
        }
        try parser.finish(into: &collector)
        #expect(collector.result.parts.first?.content == content)
    }
}
