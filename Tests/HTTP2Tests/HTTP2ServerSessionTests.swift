import HTTP2
import HTTPCore
import Testing

/// Requests and responses through a real libnghttp2 client session.
@Suite struct HTTP2ServerSessionTests {
    /// Bytes that differ at every offset (a misplaced chunk changes them).
    static func pattern(_ count: Int, seed: Int = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 31) ^ ($0 >> 8) ^ seed) }
    }

    @Test func aGetArrivesAsOneRequestEvent() throws {
        let link = try ServerLink()
        let streamID = link.client.request(
            path: "/upload?x=1", fields: [("accept", "*/*"), ("cookie", "a=1")])
        let events = try link.pump()
        let expected = HTTP2RequestHead(
            method: "GET", scheme: "https", authority: "example.test", path: "/upload?x=1",
            fields: HeaderFields([("accept", "*/*"), ("cookie", "a=1")]))
        #expect(events.first == .request(streamID: streamID, head: expected, endStream: true))
        try link.server.respond(
            streamID: streamID, status: 204, fields: HeaderFields([("Server", "formgate")]), hasBody: false)
        let after = try link.pump()
        #expect(after == [.closed(streamID: streamID, code: .noError)])
        let response = try #require(link.client.responses[streamID])
        #expect(response.status == 204)
        #expect(response.fields.map(\.0) == ["server"])
        #expect(response.closeCode == 0)
    }

    @Test func aPostBodyArrivesWholeThenEndStream() throws {
        let link = try ServerLink()
        let body = Self.pattern(300_000)
        let streamID = link.client.request(method: "POST", path: "/form", body: body)
        var received = ByteArraySink()
        try link.pump { event in
            if case .data(streamID, let count) = event {
                #expect(link.server.readInbound(streamID: streamID, into: &received) == count)
                link.server.consume(streamID: streamID, count: count)
            }
            if case .endStream(streamID) = event {
                try link.server.respond(
                    streamID: streamID, status: 200, fields: HeaderFields(), hasBody: false)
            }
        }
        #expect(received.bytes == body)
        let kinds = link.events.map { event -> String in
            switch event {
            case .request(_, _, let endStream): "request(\(endStream))"
            case .data: "data"
            case .endStream: "end"
            case .closed(_, let code): "closed(\(code))"
            default: "\(event)"
            }
        }
        #expect(kinds.first == "request(false)")
        #expect(Array(kinds.suffix(2)) == ["end", "closed(NO_ERROR)"])
        #expect(link.client.responses[streamID]?.status == 200)
    }

    @Test func aHundredStreamsInterleavedEachGetTheirOwnBytes() throws {
        let link = try ServerLink()
        var bodies: [Int32: [UInt8]] = [:]
        for index in 0..<100 {
            let body = Self.pattern(40_000 + index * 97, seed: index)
            bodies[link.client.request(method: "PUT", path: "/\(index)", body: body)] = body
        }
        var received: [Int32: ByteArraySink] = [:]
        var dataOrder: [Int32] = []
        try link.pump { event in
            switch event {
            case .data(let streamID, let count):
                dataOrder.append(streamID)
                link.server.readInbound(
                    streamID: streamID, into: &received[streamID, default: ByteArraySink()])
                link.server.consume(streamID: streamID, count: count)
            case .endStream(let streamID):
                try link.server.respond(
                    streamID: streamID, status: 201, fields: HeaderFields(), hasBody: true)
                let size = Array(String(received[streamID]?.bytes.count ?? -1).utf8)
                size.withUnsafeBytes { link.server.send(streamID: streamID, bytes: $0) }
                link.server.endStream(streamID: streamID)
            default: break
            }
        }
        #expect(received.count == 100)
        for (streamID, body) in bodies {
            #expect(received[streamID]?.bytes == body, "stream \(streamID)")
            let response = link.client.responses[streamID]
            #expect(response?.status == 201)
            #expect(response?.body == Array(String(body.count).utf8))
        }
        // Interleaved: some stream's DATA came after another stream's, then more of its own.
        let firstRuns = dataOrder.enumerated().filter {
            $0.offset == 0 || dataOrder[$0.offset - 1] != $0.element
        }
        #expect(firstRuns.count > 100)
    }

    @Test func aStreamTheClientResetIsNotAnsweredAndASecondAnswerThrows() throws {
        let link = try ServerLink()
        let gone = link.client.request(method: "POST", body: [], endBody: false)
        let live = link.client.request(method: "POST", body: [], endBody: false)
        try link.pump()
        link.client.reset(gone, code: HTTP2ErrorCode.cancel.rawValue)
        try link.pump()
        #expect(
            link.events.suffix(2) == [
                .reset(streamID: gone, code: .cancel), .closed(streamID: gone, code: .cancel),
            ])
        try link.server.respond(streamID: gone, status: 200, fields: HeaderFields(), hasBody: true)
        Array("x".utf8).withUnsafeBytes { link.server.send(streamID: gone, bytes: $0) }
        #expect(link.server.outboundCount(streamID: gone) == 0)
        #expect(try output(link.server).isEmpty)
        try link.server.respond(streamID: live, status: 200, fields: HeaderFields(), hasBody: true)
        let error = try #require(throws: HTTP2Error.self) {
            try link.server.respond(streamID: live, status: 500, fields: HeaderFields(), hasBody: false)
        }
        #expect(!error.isFatal)
        try link.pump()
        #expect(link.client.responses[live]?.status == 200)
        #expect(link.client.responses[gone]?.status == nil)
    }

    @Test func aResponseBodyDefersWhenEmptyAndResumesOnSend() throws {
        let link = try ServerLink()
        let streamID = link.client.request()
        try link.pump()
        try link.server.respond(streamID: streamID, status: 200, fields: HeaderFields(), hasBody: true)
        try link.pump()
        #expect(link.client.responses[streamID]?.status == 200)
        #expect(link.client.responses[streamID]?.body == [])
        #expect(!link.server.wantsWrite)
        let first = Self.pattern(10)
        first.withUnsafeBytes { link.server.send(streamID: streamID, bytes: $0) }
        #expect(link.server.outboundCount(streamID: streamID) == 10)
        #expect(link.server.queuedOutboundCount == 10)
        try link.pump()
        #expect(link.server.queuedOutboundCount == 0)
        #expect(link.client.responses[streamID]?.body == first)
        #expect(link.client.responses[streamID]?.closeCode == nil)
        let rest = Self.pattern(50_000, seed: 3)
        rest.withUnsafeBytes { link.server.send(streamID: streamID, bytes: $0) }
        link.server.endStream(streamID: streamID)
        try link.pump()
        #expect(link.client.responses[streamID]?.body == first + rest)
        #expect(link.client.responses[streamID]?.closeCode == 0)
        #expect(link.events.last == .closed(streamID: streamID, code: .noError))
    }

    @Test func oneHundredContinueThenTheBody() throws {
        let link = try ServerLink()
        let streamID = link.client.request(
            method: "POST", fields: [("expect", "100-continue")], body: [], endBody: false)
        let first = try link.pump()
        guard case .request(streamID, let head, endStream: false) = first.first else {
            Issue.record("no request: \(first)")
            return
        }
        #expect(head.fields.first("expect") == Array("100-continue".utf8))
        try link.server.informational(streamID: streamID, status: 100)
        try link.pump()
        #expect(link.client.responses[streamID]?.informational == [100])
        #expect(link.client.responses[streamID]?.status == nil)
        link.client.appendBody(streamID, Self.pattern(5000), end: true)
        var received = ByteArraySink()
        try link.pump { event in
            if case .data(streamID, let count) = event {
                link.server.readInbound(streamID: streamID, into: &received)
                link.server.consume(streamID: streamID, count: count)
            }
            if case .endStream(streamID) = event {
                try link.server.respond(
                    streamID: streamID, status: 200, fields: HeaderFields(), hasBody: false)
            }
        }
        #expect(received.bytes == Self.pattern(5000))
        #expect(link.client.responses[streamID]?.status == 200)
    }

    @Test func anOversizedHeaderListIsReportedForA431() throws {
        var settings = HTTP2Settings()
        settings.maxHeaderListSize = 4096
        let link = try ServerLink(settings: settings)
        let big = String(repeating: "v", count: 1500)
        let streamID = link.client.request(fields: [("x-a", big), ("x-b", big), ("x-c", big)])
        let small = link.client.request(fields: [("x-a", big)])
        let events = try link.pump()
        #expect(events.first == .headersTooLarge(streamID: streamID))
        guard case .request(small, _, true) = events.dropFirst().first else {
            Issue.record("the next stream was not served: \(events)")
            return
        }
        try link.server.respond(streamID: streamID, status: 431, fields: HeaderFields(), hasBody: false)
        try link.pump()
        #expect(link.client.responses[streamID]?.status == 431)
    }

    @Test func theBodyOfAnOversizedHeaderListIsDiscardedAndItsWindowReopened() throws {
        var settings = HTTP2Settings()
        settings.maxHeaderListSize = 4096
        settings.initialStreamWindow = 65_535
        let link = try ServerLink(settings: settings)
        let big = String(repeating: "v", count: 5000)
        let streamID = link.client.request(
            method: "POST", fields: [("x-a", big)], body: Self.pattern(300_000))
        try link.pump()
        #expect(link.events.first == .headersTooLarge(streamID: streamID))
        #expect(!link.events.contains { if case .data = $0 { true } else { false } })
        #expect(link.events.contains(.endStream(streamID: streamID)) == false)
        // Every byte went out (the session consumed what it dropped) and none is held.
        #expect(link.client.pendingUpload(streamID) == 0)
        #expect(link.server.inboundCount(streamID: streamID) == 0)
    }

    /// RFC 9113 §8.1: an answer before the request body ended, then RST_STREAM NO_ERROR.
    @Test func anEarlyAnswerThenResetNoError() throws {
        let link = try ServerLink()
        let streamID = link.client.request(method: "POST", body: Self.pattern(10_000), endBody: false)
        try link.pump()
        try link.server.respond(streamID: streamID, status: 413, fields: HeaderFields(), hasBody: true)
        Array("too large".utf8).withUnsafeBytes { link.server.send(streamID: streamID, bytes: $0) }
        link.server.endStream(streamID: streamID)
        try link.server.resetWhenAnswered(streamID: streamID)
        try link.pump()
        let response = try #require(link.client.responses[streamID])
        #expect(response.status == 413)
        #expect(response.body == Array("too large".utf8))
        #expect(response.resetCode == 0)
        #expect(link.events.last == .closed(streamID: streamID, code: .noError))
        #expect(!link.events.contains { if case .malformed = $0 { true } else { false } })
        #expect(link.server.streamRecordCount == 0)
    }

    @Test func aClientThatDoesNotReadClosesItsWindowAndTheResponseWaits() throws {
        let link = try ServerLink(client: TestClient(initialWindow: 1000, autoWindowUpdate: false))
        let streamID = link.client.request()
        try link.pump()
        try link.server.respond(streamID: streamID, status: 200, fields: HeaderFields(), hasBody: true)
        Self.pattern(5000).withUnsafeBytes { link.server.send(streamID: streamID, bytes: $0) }
        link.server.endStream(streamID: streamID)
        try link.pump()
        #expect(link.client.responses[streamID]?.body == Array(Self.pattern(5000).prefix(1000)))
        #expect(link.server.outboundCount(streamID: streamID) == 4000)
        #expect(link.server.queuedOutboundCount == 4000)
        #expect(link.server.isPeerWindowClosed(streamID: streamID))
        link.client.consume(streamID, 1000)
        try link.pump()
        #expect(link.client.responses[streamID]?.body == Array(Self.pattern(5000).prefix(2000)))
        #expect(link.server.outboundCount(streamID: streamID) == 3000)
        #expect(link.server.queuedOutboundCount == 3000)
        // A reset drops what still waits, from the session's total too.
        link.client.reset(streamID, code: HTTP2ErrorCode.cancel.rawValue)
        try link.pump()
        #expect(link.server.queuedOutboundCount == 0)
    }
}
