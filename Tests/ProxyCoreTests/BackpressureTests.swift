import ProxyCore
import Testing

/// Backpressure both ways, decided in the state machines from the buffer counts: every pause
/// is followed by its resume once the other side drains.
@Suite struct BackpressureTests {
    @Test func aSlowUpstreamPausesTheClientUntilItDrains() {
        let harness = Harness(highWater: 64)
        harness.clientSends(Wire.postHead(length: 1_000))
        harness.upstreamConnects()
        var sent = 0
        var pauses = 0
        while sent < 1_000 {
            if !harness.shell.clientReading {
                pauses += 1
                #expect(harness.shell.upstreamOutput.count > 64, "paused only above the watermark")
                harness.upstreamDrains()
                #expect(harness.shell.clientReading, "the pause is followed by its resume")
            }
            harness.clientSends(String(repeating: "b", count: 100))
            sent += 100
        }
        #expect(pauses >= 9)
        while harness.shell.clientInput.count > 0 || !harness.shell.upstreamOutput.isEmpty {
            harness.upstreamDrains()
        }
        let received = String(decoding: harness.shell.upstreamReceived, as: UTF8.self)
        #expect(received.hasSuffix("\r\n\r\n" + String(repeating: "b", count: 1_000)))
        harness.upstreamSends(Wire.ok)
        #expect(!harness.shell.upstreamReading, "the response head alone is over the watermark of 64")
        harness.clientDrains()
        #expect(harness.statuses == [200])
    }

    @Test func aSlowClientPausesTheUpstreamUntilItDrains() {
        let harness = Harness(highWater: 64)
        harness.clientSends(Wire.get)
        harness.upstreamConnects()
        harness.upstreamSends("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
        var pauses = 0
        for _ in 0..<10 {
            harness.upstreamSends(String(repeating: "r", count: 100))
            // Paused exactly while more than the watermark waits for the client.
            if harness.machine.exchange != nil {
                #expect(harness.shell.upstreamReading == (harness.shell.clientOutput.count <= 64))
            }
            while !harness.shell.upstreamReading {
                pauses += 1
                harness.clientDrains()
                #expect(harness.shell.upstreamReading == (harness.shell.clientOutput.count <= 64))
            }
        }
        harness.clientDrains()
        #expect(pauses >= 9)
        #expect(responseBody(harness.shell.clientText) == String(repeating: "r", count: 1_000))
        #expect(harness.statuses == [200])
        #expect(harness.shell.released == 1)
    }
}
