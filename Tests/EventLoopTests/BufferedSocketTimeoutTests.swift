import Testing

@testable import EventLoop

/// `setTimeouts(readMilliseconds: 0, …)` must clear a read timeout for good. libevent's
/// `event_add(ev, NULL)` keeps a timeout the event already has, and a persistent event
/// remembers its last timeout across `event_del` and re-arms it after each wake-up: a cleared
/// idle deadline of a pooled upstream connection went on running during its next request.
///
/// Each test lets the peer send data on a loop timer well after the old deadline; the test
/// ends when that data is read (cleared) or the timeout is reported (not cleared): the order
/// of two events on one loop, not a sleep.
@Suite struct BufferedSocketTimeoutTests {
    /// After `timeout` ms from now the peer sends `bytes`.
    func send(_ bytes: [UInt8], from peer: Recorder, after milliseconds: Int64, on harness: LoopHarness)
        -> Timer
    {
        let timer = Timer(base: harness.base) { peer.socket.output.add(bytes) }
        timer.schedule(milliseconds: milliseconds)
        return timer
    }

    @Test func clearingTheTimeoutOfAnArmedReadStopsIt() throws {
        let harness = try LoopHarness()
        let (reader, peer) = try harness.socketPair()
        reader.socket.setTimeouts(readMilliseconds: 100, writeMilliseconds: 0)
        reader.socket.enable()
        reader.socket.setTimeouts(readMilliseconds: 0, writeMilliseconds: 0)
        let late = send(Array("late".utf8), from: peer, after: 400, on: harness)
        #expect(harness.run { !reader.events.isEmpty || reader.received.count == 4 })
        #expect(reader.events.isEmpty, "the cleared read timeout fired: \(reader.events)")
        #expect(reader.received == Array("late".utf8))
        late.cancel()
        reader.socket.close()
        peer.socket.close()
    }

    /// The timeout is cleared while reading is paused (the read event deleted), and reading
    /// resumes: after the next data the timeout must not come back.
    @Test func aTimeoutClearedWhileReadingWasPausedDoesNotReturnAfterData() throws {
        let harness = try LoopHarness()
        let (reader, peer) = try harness.socketPair()
        reader.socket.setTimeouts(readMilliseconds: 100, writeMilliseconds: 0)
        reader.socket.enable()
        reader.socket.setReading(false)
        reader.socket.setTimeouts(readMilliseconds: 0, writeMilliseconds: 0)
        reader.socket.setReading(true)
        peer.socket.output.add(Array("first".utf8))
        #expect(harness.run { !reader.events.isEmpty || reader.received.count == 5 })
        let late = send(Array("late".utf8), from: peer, after: 400, on: harness)
        #expect(harness.run { !reader.events.isEmpty || reader.received.count == 9 })
        #expect(reader.events.isEmpty, "the cleared read timeout came back: \(reader.events)")
        #expect(reader.received == Array("firstlate".utf8))
        late.cancel()
        reader.socket.close()
        peer.socket.close()
    }

    /// A timeout set again after being cleared still fires (clearing did not break timeouts).
    @Test func aTimeoutSetAfterClearingStillFires() throws {
        let harness = try LoopHarness()
        let (reader, peer) = try harness.socketPair()
        reader.socket.setTimeouts(readMilliseconds: 5_000, writeMilliseconds: 0)
        reader.socket.enable()
        reader.socket.setTimeouts(readMilliseconds: 0, writeMilliseconds: 0)
        reader.socket.setTimeouts(readMilliseconds: 50, writeMilliseconds: 0)
        #expect(harness.run(within: 2) { !reader.events.isEmpty })
        #expect(reader.events == [[.reading, .timeout]])
        reader.socket.close()
        peer.socket.close()
    }
}
