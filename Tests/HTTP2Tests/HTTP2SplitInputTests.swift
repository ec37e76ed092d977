import HTTP2
import HTTPCore
import Testing

/// The server's events do not depend on how the client's bytes are cut into reads.
@Suite struct HTTP2SplitInputTests {
    /// What a caller sees of a run: events with adjacent `.data` of a stream merged (a read
    /// boundary inside a DATA frame splits its chunk), and every body byte.
    struct Transcript: Equatable {
        var events: [HTTP2Event] = []
        var bodies: [Int32: [UInt8]] = [:]
    }

    /// A client's first flight: preface, SETTINGS, a POST with its body and END_STREAM, a GET
    /// with END_STREAM and a malformed request, all within the default 64 KiB window.
    static let flight: [UInt8] = {
        let client = TestClient()
        client.request(
            method: "POST", path: "/up", fields: [("content-type", "text/plain")],
            body: HTTP2ServerSessionTests.pattern(3000))
        client.request(path: "/get")
        client.request(path: "/bad", fields: [("te", "gzip")])
        return client.output()
    }()

    static func run(_ input: [UInt8], cuts: [Int]) throws -> Transcript {
        let server = try HTTP2ServerSession()
        var transcript = Transcript()
        var start = 0
        for cut in cuts + [input.count] where cut >= start {
            try input[start..<cut].withUnsafeBytes { try server.receive($0) }
            while let event = server.nextEvent() {
                if case .data(let streamID, let count) = event {
                    var sink = ByteArraySink()
                    #expect(server.readInbound(streamID: streamID, into: &sink) == count)
                    transcript.bodies[streamID, default: []] += sink.bytes
                    if case .data(streamID, let previous) = transcript.events.last {
                        transcript.events[transcript.events.count - 1] = .data(
                            streamID: streamID, count: previous + count)
                        continue
                    }
                }
                transcript.events.append(event)
            }
            start = cut
        }
        return transcript
    }

    @Test func wholeByteByByteAndAtEverySplitPointAgree() throws {
        let input = Self.flight
        let whole = try Self.run(input, cuts: [])
        #expect(whole.bodies[1] == HTTP2ServerSessionTests.pattern(3000))
        #expect(whole.events.count == 5)
        #expect(whole.events.contains(.malformed(streamID: 5, reason: .invalidField)))
        #expect(whole.events.last == .endStream(streamID: 1))
        #expect(try Self.run(input, cuts: Array(1..<input.count)) == whole)
        for cut in 1..<input.count {
            let split = try Self.run(input, cuts: [cut])
            if split != whole {
                Issue.record("a split at \(cut) of \(input.count) differs: \(split.events)")
                return
            }
        }
    }
}
