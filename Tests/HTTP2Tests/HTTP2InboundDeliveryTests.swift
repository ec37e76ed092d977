import HTTP2
import HTTPCore
import Testing

/// `deliverInbound`: a stream's DATA written straight to the caller's sink as it arrives
/// (what was queued before first), counted as taken, and still held against the window
/// until consumed.
@Suite struct HTTP2InboundDeliveryTests {
    final class Collector: ByteSink {
        var bytes: [UInt8] = []
        func write(_ bytes: UnsafeRawBufferPointer) { self.bytes += bytes }
    }

    @Test func dataGoesToTheSinkAsItArrivesAndTheWindowStaysTheCallers() throws {
        var settings = HTTP2Settings()
        settings.initialStreamWindow = 65_535
        let link = try ServerLink(settings: settings)
        let body = HTTP2ServerSessionTests.pattern(200_000)
        let streamID = link.client.request(method: "POST", body: body)
        try link.pump()
        // Queued before a sink was given: handed over when it is.
        #expect(link.server.inboundCount(streamID: streamID) == 65_535)
        let collector = Collector()
        link.server.deliverInbound(streamID: streamID, to: collector)
        #expect(collector.bytes.count == 65_535)
        #expect(link.server.inboundCount(streamID: streamID) == 0)
        #expect(link.server.takenCount(streamID: streamID) == 65_535)
        // Delivery does not open the window: nothing more comes until consumed.
        try link.pump()
        #expect(collector.bytes.count == 65_535)
        var rounds = 0
        var consumed = 0
        while collector.bytes.count < body.count, rounds < 10 {
            link.server.consume(streamID: streamID, count: collector.bytes.count - consumed)
            consumed = collector.bytes.count
            try link.pump()
            rounds += 1
        }
        #expect(collector.bytes == body)
        #expect(link.server.takenCount(streamID: streamID) == body.count)
        #expect(link.server.inboundCount(streamID: streamID) == 0)
        // Back to queueing once the sink is withdrawn.
        link.server.deliverInbound(streamID: streamID, to: nil)
        #expect(link.events.contains(.endStream(streamID: streamID)))
    }
}
