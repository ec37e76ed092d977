import HTTPCore
import MultipartEncoding
import Testing

@Suite struct MultipartEncoderTests {
    @Test func writesCanonicalBytes() throws {
        var sink = ByteArraySink()
        var encoder = MultipartEncoder(boundary: try Boundary("XyZ"))
        try encoder.beginPart(ContentDisposition(name: "title"), into: &sink)
        Array("hello".utf8).withUnsafeBytes { encoder.writeBody($0, into: &sink) }
        try encoder.beginPart(
            ContentDisposition(name: "file", filename: "a\"b.png"),
            headers: HeaderFields([("Content-Type", "image/png")]),
            into: &sink)
        Array("\r\n--XyZ-".utf8).withUnsafeBytes { encoder.writeBody($0, into: &sink) }
        try encoder.finish(into: &sink)
        let expected =
            "--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nhello\r\n"
            + "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a%22b.png\"\r\nContent-Type: image/png\r\n\r\n"
            + "\r\n--XyZ-\r\n--XyZ--\r\n"
        #expect(String(decoding: sink.bytes, as: UTF8.self) == expected)
        #expect(encoder.contentType == "multipart/form-data; boundary=XyZ")
    }

    /// A head as long as its bound allows: every byte of the name and file name escaped (three
    /// bytes each), long header values and a 70-byte boundary, then a short head reusing the
    /// buffer. `ByteWriter` traps past the room the encoder reserved.
    @Test func headsAtTheirLongest() throws {
        var sink = ByteArraySink()
        let boundary = String(repeating: "b", count: 70)
        var encoder = MultipartEncoder(boundary: try Boundary(boundary))
        let name = String(repeating: "\"", count: 300)
        let filename = String(repeating: "\n\r", count: 200)
        let value = String(repeating: "v", count: 5000)
        try encoder.beginPart(
            ContentDisposition(name: name, filename: filename),
            headers: HeaderFields([("Content-Type", value), ("X-A", value)]), into: &sink)
        try encoder.beginPart(name: name, filename: "\\", into: &sink)
        try encoder.beginPart(ContentDisposition(name: "a"), into: &sink)
        try encoder.finish(into: &sink, trailing: 7)
        let disposition =
            "Content-Disposition: form-data; name=\"" + String(repeating: "%22", count: 300) + "\""
        let expected =
            "--\(boundary)\r\n\(disposition); filename=\""
            + String(repeating: "%0A%0D", count: 200)
            + "\"\r\nContent-Type: \(value)\r\nX-A: \(value)\r\n\r\n"
            + "\r\n--\(boundary)\r\n\(disposition); filename=\"\\\\\"\r\n\r\n"
            + "\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n"
            + "\r\n--\(boundary)--\r\n\r\n\r\n "
        #expect(String(decoding: sink.bytes, as: UTF8.self) == expected)
    }

    @Test func emptyForm() throws {
        var sink = ByteArraySink()
        var encoder = MultipartEncoder(boundary: try Boundary("XyZ"))
        try encoder.finish(into: &sink)
        #expect(sink.bytes == Array("--XyZ--\r\n".utf8))
        #expect(throws: MultipartEncodingError(.outOfOrder)) { try encoder.finish(into: &sink) }
        #expect(throws: MultipartEncodingError(.outOfOrder)) {
            try encoder.beginPart(ContentDisposition(name: "a"), into: &sink)
        }
    }

    @Test(arguments: [
        ("X-A", "a\r\nInjected: 1"), ("X-A", "a\u{0}"), ("Bad Name", "v"), ("Content-Disposition", "x"),
    ])
    func refusesHeaderInjection(_ name: String, _ value: String) throws {
        var sink = ByteArraySink()
        var encoder = MultipartEncoder()
        #expect(throws: MultipartEncodingError.self) {
            try encoder.beginPart(
                ContentDisposition(name: "a"), headers: HeaderFields([(name, value)]), into: &sink)
        }
        #expect(sink.bytes.isEmpty)
    }

    @Test func randomBoundaries() throws {
        var seen: Set<Boundary> = []
        for _ in 0..<1000 {
            let boundary = Boundary.random()
            #expect(boundary.bytes.count == 12 + 32)
            #expect(boundary.description.hasPrefix("----FormGate"))
            #expect(boundary.bytes.dropFirst(12).allSatisfy { Array("0123456789abcdef".utf8).contains($0) })
            _ = try Boundary(boundary.bytes)  // valid per RFC 2046
            seen.insert(boundary)
        }
        #expect(seen.count == 1000)
        // Each hex digit position takes all 16 values over 1000 draws: 128 bits really vary.
        let boundaries = Array(seen)
        for position in 12..<44 {
            #expect(Set(boundaries.map { $0.bytes[position] }).count == 16)
        }
    }
}
