import HTTPCore
import ProxyCore
import Testing

/// Seeded random event sequences through one connection, with the invariants checked after
/// every step: nothing is sent after the close; client reads are paused exactly while more
/// than the high watermark waits for the upstream (while a body is read); every started timer
/// is cancelled or fires; every exchange produces exactly one log record.
@Suite struct PropertyTests {
    typealias Seeded = SplitMix64

    static let highWater = 1024

    /// The requests a client sends, back to back: GETs and POSTs with Content-Length bodies,
    /// some on a route whose check holds them.
    static func requests(_ random: inout Seeded) -> [UInt8] {
        var out: [UInt8] = []
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let path = Bool.random(using: &random) ? "/a" : "/c"
            if Int.random(in: 0..<3, using: &random) == 0 {
                out += Array("GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n".utf8)
            } else {
                let length = Int.random(in: 1...3_000, using: &random)
                out += Array("POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Length: \(length)\r\n\r\n".utf8)
                out += [UInt8](repeating: UInt8(ascii: "x"), count: length)
            }
        }
        return out
    }

    static func response(_ random: inout Seeded) -> [UInt8] {
        let length = Int.random(in: 0...3_000, using: &random)
        if Bool.random(using: &random) {
            return Array("HTTP/1.1 200 OK\r\nContent-Length: \(length)\r\n\r\n".utf8)
                + [UInt8](repeating: UInt8(ascii: "r"), count: length)
        }
        return Array("HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
            + Array((String(length + 1, radix: 16) + "\r\n").utf8)
            + [UInt8](repeating: 0x72, count: length + 1)
            + Array("\r\n0\r\n\r\n".utf8)
    }

    @Test(arguments: 0..<200)
    func randomEventSequencesKeepTheInvariants(seed: Int) {
        var random = Seeded(seed: UInt64(seed) &* 7919)
        var route = Route(pathPrefix: "/c")
        route.checks = [FixedCheck(answer: .hold(milliseconds: 2_000))]
        let harness = Harness(routes: RouteTable([route]), highWater: Self.highWater)
        var client = Self.requests(&random)
        var response: [UInt8] = []
        var halfClosed = false
        for _ in 0..<120 {
            step(harness, &random, &client, &response, &halfClosed)
            check(harness, halfClosed: halfClosed, seed: seed)
            if harness.shell.closed { break }
        }
        harness.clientResets()
        #expect(harness.shell.closed)
        #expect(harness.shell.timers.isEmpty, "seed \(seed): timers left armed: \(harness.shell.timers)")
        #expect(harness.shell.sentAfterClose == 0, "seed \(seed)")
        let exchangeRecords = harness.shell.records.filter { $0.requestID != nil }.count
        #expect(exchangeRecords == harness.shell.exchangesStarted, "seed \(seed): one record per exchange")
    }

    private func step(
        _ harness: Harness, _ random: inout Seeded, _ client: inout [UInt8], _ response: inout [UInt8],
        _ halfClosed: inout Bool
    ) {
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<30:
            guard !client.isEmpty, !halfClosed else { return }
            let count = min(client.count, Int.random(in: 1...2_000, using: &random))
            harness.shell.clientInput.append(contentsOf: client.prefix(count))
            client.removeFirst(count)
            if harness.shell.clientReading { harness.clientReadable() }
        case 30..<40: harness.clientDrains()
        case 40..<50:
            guard harness.shell.upstream == .connecting else { return }
            harness.upstreamConnects()
            response = Self.response(&random)
        case 50..<62: harness.upstreamDrains()
        case 62..<78:
            guard harness.shell.upstream == .connected, !response.isEmpty else { return }
            let count = min(response.count, Int.random(in: 1...1_500, using: &random))
            let piece = String(decoding: response.prefix(count), as: UTF8.self)
            response.removeFirst(count)
            harness.upstreamSends(piece)
        case 78..<88: harness.advance(by: Int64.random(in: 1...2_500, using: &random))
        case 88..<93:
            harness.verdict(
                0, Bool.random(using: &random) ? .release() : .refuse(Refusal(status: 401, reason: "no")))
        case 93..<95:
            halfClosed = true
            harness.clientHalfCloses()
        case 95..<97: harness.upstreamFails(.closed(tlsError: nil))
        default: harness.clientResets()
        }
    }

    private func check(_ harness: Harness, halfClosed: Bool, seed: Int) {
        let shell = harness.shell
        #expect(shell.sentAfterClose == 0, "seed \(seed): sent after close")
        #expect(shell.records.filter { $0.requestID != nil }.count <= shell.exchangesStarted, "seed \(seed)")
        guard !shell.closed, !halfClosed, let exchange = harness.machine.exchange, exchange.readsBody else {
            return
        }
        let waiting = shell.upstreamOutput.count + shell.staging.count
        #expect(
            shell.clientReading == (waiting <= Self.highWater),
            "seed \(seed): reading \(shell.clientReading) with \(waiting) bytes waiting (\(shell.log.suffix(30)))"
        )
    }
}
