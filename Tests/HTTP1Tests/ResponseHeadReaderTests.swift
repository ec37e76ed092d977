import HTTP1
import Testing

/// The bytes of a response, fed to a reader in pieces as a connection would deliver them.
final class FedBytes: ByteSource {
    var bytes: [UInt8] = []

    var count: Int { bytes.count }

    func forEachChunk(limit: Int, _ body: (UnsafeRawBufferPointer) -> Bool) {
        bytes.prefix(limit).withUnsafeBytes { _ = body($0) }
    }

    func drain(_ count: Int) { bytes.removeFirst(count) }

    func remove(_ count: Int) -> [UInt8] {
        defer { drain(count) }
        return Array(bytes.prefix(count))
    }
}

/// One reader of response heads for the upstream leg and the auth service: interim heads are
/// skipped, a 101 is handed back, the framing follows the request's method, and a head split
/// anywhere reads the same as a whole one.
@Suite struct ResponseHeadReaderTests {
    static let interimThenFinal = Array(
        ("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
            + "HTTP/1.1 201 Created\r\nContent-Length: 5\r\n\r\nhello").utf8)

    @Test func interimHeadsAreSkippedWhereverTheBytesSplit() throws {
        for split in 0...Self.interimThenFinal.count {
            var reader = ResponseHeadReader(limit: 1024)
            let input = FedBytes()
            input.bytes = Array(Self.interimThenFinal[..<split])
            var answer = try reader.read(from: input, requestMethod: "POST")
            input.bytes += Self.interimThenFinal[split...]
            if answer == nil { answer = try reader.read(from: input, requestMethod: "POST") }
            let (head, framing) = try #require(answer, "split at \(split)")
            #expect(head.status == 201, "split at \(split)")
            #expect(framing == .length(5), "split at \(split)")
            #expect(input.bytes == Array("hello".utf8), "split at \(split): the body stays")
        }
    }

    @Test func aSwitchOfProtocolsIsHandedBack() throws {
        var reader = ResponseHeadReader(limit: 1024)
        let input = FedBytes()
        input.bytes = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n".utf8)
        let answer = try #require(try reader.read(from: input, requestMethod: "GET"))
        #expect(answer.head.status == 101)
        #expect(answer.framing == .none)
    }

    @Test func aHeadRequestsAnswerHasNoBody() throws {
        var reader = ResponseHeadReader(limit: 1024)
        let input = FedBytes()
        input.bytes = Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n".utf8)
        #expect(try reader.read(from: input, requestMethod: "HEAD")?.framing == BodyFraming.none)
    }

    @Test func ambiguousFramingAndOversizeHeadsAreRefused() {
        let input = FedBytes()
        input.bytes = Array("HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\n".utf8)
        var reader = ResponseHeadReader(limit: 1024)
        #expect(throws: HTTP1Error(.invalidContentLength)) {
            try reader.read(from: input, requestMethod: "GET")
        }
        input.bytes = Array(("HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 100) + "\r\n\r\n").utf8)
        var small = ResponseHeadReader(limit: 64)
        let error = #expect(throws: HTTP1Error.self) { try small.read(from: input, requestMethod: "GET") }
        #expect(error?.reason == .headTooLarge)
    }
}
