import HTTP2
import HTTPCore
import Testing

/// The budget of unproductive frames (`HTTP2Settings.unproductiveFrameBudget`): a client that
/// reads every answer and still floods the session with frames that move nothing on is ended
/// with GOAWAY ENHANCE_YOUR_CALM; frames that carry requests and responses earn it back.
@Suite struct HTTP2FrameBudgetTests {
    /// A frame that costs the session work and moves no request or response on.
    enum Unproductive: String, CaseIterable, Sendable {
        case ping, settings, priority, windowUpdate, emptyData

        /// Writes the `index`th copy (PRIORITY frames go to idle streams 3, 5, ...; empty DATA
        /// to stream 1, a POST whose body has not ended).
        func write(_ writer: FrameWriter, index: Int) {
            switch self {
            case .ping: writer.ping()
            case .settings: writer.settings([(0x1, 4096)])
            case .priority: writer.frame(0x2, stream: Int32(3 + 2 * index), FrameWriter.word(0) + [15])
            case .windowUpdate: writer.windowUpdate(stream: 0, increment: 1)
            case .emptyData: writer.data(stream: 1, [])
            }
        }
    }

    static func goaways(_ link: RawLink) -> [UInt32] {
        link.frames(ofType: Frame.goaway).map(\.errorCode)
    }

    /// A link whose stream 1 is an open POST, after the preface (whose empty SETTINGS costs one).
    static func link(budget: Int) throws -> RawLink {
        var settings = HTTP2Settings()
        settings.unproductiveFrameBudget = budget
        let link = try RawLink(settings: settings)
        link.writer.headers(stream: 1, FrameWriter.request(method: "POST"), endStream: false)
        try link.send()
        return link
    }

    /// 49 frames after the preface spend a budget of 50 and are all answered; the 50th ends the
    /// connection, sent in batches of 7 that the client reads as they are answered.
    @Test(arguments: Unproductive.allCases)
    func aFloodPastTheBudgetEndsWithEnhanceYourCalm(kind: Unproductive) throws {
        let link = try Self.link(budget: 50)
        for batch in stride(from: 0, to: 49, by: 7) {
            for index in batch..<batch + 7 { kind.write(link.writer, index: index) }
            try link.send()
        }
        #expect(Self.goaways(link).isEmpty)
        #expect(link.server.wantsRead)
        kind.write(link.writer, index: 49)
        try link.send()
        #expect(Self.goaways(link) == [HTTP2ErrorCode.enhanceYourCalm.rawValue])
        #expect(link.events.contains(.terminating(code: .enhanceYourCalm)))
        #expect(link.frames(ofType: Frame.goaway).first?.lastStreamID == 1)
        #expect(!link.server.wantsRead)
    }

    /// With the defaults, a client that reads its PING ACKs is ended at its 1,000th PING (the
    /// preface's SETTINGS was the first frame charged); libnghttp2's ACK bound never applies.
    @Test func withTheDefaultsTheThousandthPingOfAReadingClientEndsIt() throws {
        let link = try RawLink()
        for _ in 0..<999 {
            link.writer.ping()
            try link.send()
        }
        #expect(Self.goaways(link).isEmpty)
        #expect(link.frames(ofType: Frame.ping).count == 999)
        link.writer.ping()
        try link.send()
        #expect(Self.goaways(link) == [HTTP2ErrorCode.enhanceYourCalm.rawValue])
        #expect(link.frames(ofType: Frame.ping).count == 999)
    }

    /// DATA with bytes earns one back: a PING and a byte of the body, 100 times, on a budget of 5.
    @Test func requestBytesEarnTheBudgetBack() throws {
        let link = try Self.link(budget: 5)
        for _ in 0..<100 {
            link.writer.ping()
            link.writer.data(stream: 1, [0x61])
            try link.send()
        }
        #expect(Self.goaways(link).isEmpty)
        #expect(link.frames(ofType: Frame.ping).count == 100)
    }

    /// A response's HEADERS earns one back: a PING and a GET answered 204, 100 times.
    @Test func responsesEarnTheBudgetBack() throws {
        let link = try Self.link(budget: 5)
        for index in 0..<100 {
            let stream = Int32(3 + 2 * index)
            link.writer.ping()
            link.writer.headers(stream: stream, FrameWriter.request())
            try link.send()
            try link.server.respond(streamID: stream, status: 204, fields: HeaderFields(), hasBody: false)
            try link.send()
        }
        #expect(Self.goaways(link).isEmpty)
        #expect(link.frames(ofType: Frame.headers).count == 100)
    }

    /// ACKs cost nothing: 100 PING ACKs on a budget of 5.
    @Test func acknowledgementsAreFree() throws {
        let link = try Self.link(budget: 5)
        for _ in 0..<100 { link.writer.ping(ack: true) }
        try link.send()
        #expect(Self.goaways(link).isEmpty)
        #expect(link.server.wantsRead)
    }
}
