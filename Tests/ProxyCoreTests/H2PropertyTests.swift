import HTTPCore
import ProxyCore
import Testing

/// Seeded random event sequences through one HTTP/2 connection (several streams at once),
/// with the invariants checked after every step: nothing is sent after the close; the window
/// credit given back never exceeds what was taken, per stream; every started timer is
/// cancelled or fires; every exchange produces exactly one log record. The seed is in every
/// failure's message.
@Suite struct H2PropertyTests {
    typealias Seeded = SplitMix64

    /// What the test's client has done on a stream.
    struct ClientStream {
        var body: [UInt8]
        var ended = false
    }

    @Test(arguments: 0..<200)
    func randomEventSequencesKeepTheInvariants(seed: Int) {
        var random = Seeded(seed: UInt64(seed) &* 104_729)
        var route = Route(pathPrefix: "/c")
        route.checks = [FixedCheck(answer: .hold(milliseconds: 2_000))]
        let harness = H2Harness(routes: RouteTable([route]), highWater: 1024)
        var streams: [Int32: ClientStream] = [:]
        var nextID: Int32 = 1
        for _ in 0..<150 {
            step(harness, &random, &streams, &nextID)
            check(harness, seed: seed)
            if harness.closed { break }
        }
        harness.close()
        #expect(harness.closed, "seed \(seed)")
        #expect(harness.timers.isEmpty, "seed \(seed): timers left armed: \(harness.timers)")
        #expect(harness.sentAfterClose == 0, "seed \(seed)")
        #expect(
            harness.exchangeRecords.count == harness.exchangesStarted, "seed \(seed): one record per exchange"
        )
        let ids = harness.exchangeRecords.compactMap(\.clientProtocol.streamID)
        #expect(Set(ids).count == ids.count, "seed \(seed): one record per stream")
    }

    private func check(_ harness: H2Harness, seed: Int) {
        #expect(harness.sentAfterClose == 0, "seed \(seed): sent after close")
        for (id, shell) in harness.shells {
            #expect(shell.overdrawn == 0, "seed \(seed): stream \(id) moved bytes its input did not hold")
        }
        for (id, given) in harness.consumed {
            #expect(given <= harness.taken[id] ?? 0, "seed \(seed): stream \(id) given back \(given) > taken")
        }
        #expect(
            harness.machine.activeCount <= harness.shells.count,
            "seed \(seed): more running streams than opened")
    }

    private func step(
        _ harness: H2Harness, _ random: inout Seeded, _ streams: inout [Int32: ClientStream],
        _ nextID: inout Int32
    ) {
        let open = streams.keys.sorted()
        let id = open.isEmpty ? nextID : open[Int.random(in: 0..<open.count, using: &random)]
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<12: openStream(harness, &random, &streams, &nextID)
        case 12..<35: send(harness, &random, &streams, id)
        case 35..<45: upstream(harness, &random, id)
        case 45..<55: harness.clientReads(id)
        case 55..<62: harness.flushed(socketOutput: Int.random(in: 0...2_048, using: &random))
        case 62..<67: harness.reset(id)
        case 67..<72:
            harness.streamClosed(id)
            streams[id] = nil
        case 72..<85: harness.advance(by: Int64.random(in: 1...2_500, using: &random))
        case 85..<90: harness.received(headerBlockOpen: Int.random(in: 0..<8, using: &random) == 0)
        case 90..<92: harness.drain()
        case 92..<94: harness.headersTooLarge(nextID + 100)
        case 94..<96: harness.malformed(id)
        case 96..<97:
            if Bool.random(using: &random) {
                harness.receiveFailed(flood: Bool.random(using: &random))
            } else {
                harness.sessionTerminating()
            }
        default: harness.flushed(sessionDone: true)
        }
    }

    private func openStream(
        _ harness: H2Harness, _ random: inout Seeded, _ streams: inout [Int32: ClientStream],
        _ nextID: inout Int32
    ) {
        let id = nextID
        nextID += 2
        let path = Bool.random(using: &random) ? "/a" : "/c"
        if Bool.random(using: &random) {
            harness.request(id, method: "GET", path: path, endStream: true)
            streams[id] = ClientStream(body: [], ended: true)
            return
        }
        let length = Int.random(in: 1...3_000, using: &random)
        let declared = Bool.random(using: &random)
        harness.request(id, path: path, fields: declared ? [("content-length", "\(length)")] : [])
        streams[id] = ClientStream(body: [UInt8](repeating: UInt8(ascii: "x"), count: length))
    }

    private func send(
        _ harness: H2Harness, _ random: inout Seeded, _ streams: inout [Int32: ClientStream], _ id: Int32
    ) {
        guard var stream = streams[id], !stream.ended else { return }
        if stream.body.isEmpty {
            harness.endStream(id)
            stream.ended = true
        } else {
            let count = min(stream.body.count, Int.random(in: 1...1_500, using: &random))
            harness.data(id, stream.body.prefix(count))
            stream.body.removeFirst(count)
        }
        streams[id] = stream
    }

    private func upstream(_ harness: H2Harness, _ random: inout Seeded, _ id: Int32) {
        let shell = harness.shell(id)
        switch shell.upstream {
        case .connecting: harness.upstreamConnects(id)
        case .connected:
            if Bool.random(using: &random) {
                harness.upstreamDrains(id)
            } else {
                harness.upstreamSends(id, H2ConnectionStateMachineTests.response)
            }
        case .none: break
        }
        if Int.random(in: 0..<4, using: &random) == 0 {
            harness.exchangeIO(id, .verdict(index: 0, .release()))
            harness.execute()
        }
    }
}
