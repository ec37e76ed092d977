import Foundation
import HTTPCore
import MultipartEncoding
import MultipartParsing
import Testing

@Suite struct MultipartFormBuilderTests {
    func temporaryFile(_ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "formgate-\(UUID().uuidString)"
        ).path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    struct Collect: MultipartEventHandler {
        var parts: [(PartHead, [UInt8])] = []
        mutating func handle(_ event: MultipartEvent) {
            switch event {
            case .partBegin(let head): parts.append((head, []))
            case .body(let bytes): parts[parts.count - 1].1 += bytes
            case .partEnd, .end: break
            }
        }
    }

    @Test func exactContentLengthAndStreamedFiles() throws {
        var content = [UInt8](repeating: 0, count: 300_000)
        let seed: UInt64 = 0xF0_B1D
        var generator = SplitMix64(seed: seed)
        for index in content.indices { content[index] = UInt8.random(in: 0...255, using: &generator) }
        let path = try temporaryFile(content)
        defer { try? FileManager.default.removeItem(atPath: path) }

        var form = MultipartFormBuilder()
        form.addField(name: "title", value: "Holiday ☀︎")
        try form.addFile(name: "photo", filename: "IMG 0001.JPG", contentType: "image/jpeg", path: path)
        form.addFile(name: "note", filename: "n.txt", contentType: "text/plain", content: Array("hi".utf8))
        let announced = form.contentLength
        var sink = ByteArraySink()
        try form.write(into: &sink)
        #expect(Int64(sink.bytes.count) == announced)

        let boundary = try MediaType.parse(form.contentType).multipartBoundary()
        var parser = try MultipartParser(boundary: boundary)
        var collect = Collect()
        try parser.feed(sink.bytes, into: &collect)
        try parser.finish(into: &collect)
        #expect(parser.anomalies == [])
        #expect(collect.parts.map { $0.0.nameString } == ["title", "photo", "note"])
        #expect(collect.parts[0].1 == Array("Holiday ☀︎".utf8))
        #expect(collect.parts[1].0.filenameString == "IMG 0001.JPG")
        #expect(collect.parts[1].0.contentType?.essence == "image/jpeg")
        #expect(collect.parts[1].1 == content, "content seed \(seed)")
        #expect(collect.parts[2].1 == Array("hi".utf8))
    }

    @Test func fileThatChangesSizeIsAnError() throws {
        let path = try temporaryFile(Array("12345".utf8))
        defer { try? FileManager.default.removeItem(atPath: path) }
        var form = MultipartFormBuilder()
        try form.addFile(name: "f", filename: "f", path: path)
        try Data("123456".utf8).write(to: URL(fileURLWithPath: path))
        var sink = CountingSink()
        #expect(throws: MultipartEncodingError(.fileChanged(path: path))) { try form.write(into: &sink) }
    }

    @Test func missingFileIsAnError() {
        var form = MultipartFormBuilder()
        #expect(throws: MultipartEncodingError.self) {
            try form.addFile(name: "f", filename: "f", path: "/nonexistent/formgate")
        }
    }
}
