import Foundation
import HTTP2
import HTTPCore
import Testing

/// The cross-check with an independent implementation: Debian's python3-h2 as the client
/// (Resources/h2_client.py), the server session in this process, bytes through pipes.
/// Fails, not skips, when Python or h2 is missing.
@Suite struct H2PythonClientTests {
    /// Answers the script's streams: POST /echo gets its body back, GET /empty a 204.
    final class EchoServer {
        let session: HTTP2ServerSession
        var received: [Int32: ByteArraySink] = [:]

        init() throws {
            session = try HTTP2ServerSession()
        }

        func handle(_ event: HTTP2Event) throws {
            switch event {
            case .request(let streamID, let head, true) where head.path == "/empty":
                try session.respond(streamID: streamID, status: 204, fields: HeaderFields(), hasBody: false)
            case .data(let streamID, let count):
                session.readInbound(streamID: streamID, into: &received[streamID, default: ByteArraySink()])
                session.consume(streamID: streamID, count: count)
            case .endStream(let streamID):
                let body = received[streamID]?.bytes ?? []
                try session.respond(
                    streamID: streamID, status: 200,
                    fields: HeaderFields([("content-length", "\(body.count)")]),
                    hasBody: true)
                body.withUnsafeBytes { session.send(streamID: streamID, bytes: $0) }
                session.endStream(streamID: streamID)
            default:
                break
            }
        }
    }

    @Test func aPythonH2ClientUploadsAndGetsItsBytesBack() throws {
        let size = 3 << 20
        let python = ProcessInfo.processInfo.environment["FORMGATE_PYTHON"] ?? "/usr/bin/python3"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Resources/h2_client.py").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, String(size)]
        let toClient = Pipe()
        let fromClient = Pipe()
        let errors = Pipe()
        process.standardInput = toClient
        process.standardOutput = fromClient
        process.standardError = errors
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        let server = try EchoServer()
        var events: [HTTP2Event] = []
        var summary: [String: Any]?
        while summary == nil {
            let header = fromClient.fileHandleForReading.readData(ofLength: 5)
            guard header.count == 5 else { break }
            let length = header.dropFirst().reduce(0) { $0 << 8 | Int($1) }
            let payload = length == 0 ? Data() : fromClient.fileHandleForReading.readData(ofLength: length)
            if header.first == UInt8(ascii: "E") {
                summary = try JSONSerialization.jsonObject(with: payload) as? [String: Any]
                break
            }
            try Array(payload).withUnsafeBytes { try server.session.receive($0) }
            var reply = ByteArraySink()
            repeat {
                while let event = server.session.nextEvent() {
                    events.append(event)
                    try server.handle(event)
                }
            } while try server.session.writeOutput(into: &reply) > 0
            let count = UInt32(reply.bytes.count)
            toClient.fileHandleForWriting.write(Data(FrameWriter.word(count) + reply.bytes))
        }
        process.waitUntilExit()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let result = try #require(summary, "h2_client.py gave no summary: \(stderr)")
        #expect(process.terminationStatus == 0, "\(stderr)")
        let expected = (0..<size).map { UInt8(($0 * 7) % 251) }
        #expect(server.received[1]?.bytes == expected)
        #expect(result["post_status"] as? Int == 200)
        #expect(result["echo_size"] as? Int == size)
        #expect(result["echo_matches"] as? Bool == true)
        #expect(result["get_status"] as? Int == 204)
        #expect(result["bad_reset"] as? Int == Int(HTTP2ErrorCode.protocolError.rawValue))
        #expect(events.contains(.malformed(streamID: 5, reason: .invalidField)))
    }
}
