import ProxyCore
import Testing

/// Every phase of an HTTP/2 connection against every event the shell reports: the phase
/// each pair leads to, and the invariants after it and after the close that follows (nothing
/// sent after the close, window credit given back never above what was taken, every timer
/// cancelled or fired, exactly one log record per exchange).
@Suite struct H2PhaseEventTests {
    enum StartPhase: String, CaseIterable, CustomTestStringConvertible {
        case open, draining, goAwayReceived, closing, closed
        var testDescription: String { rawValue }
    }

    enum Event: String, CaseIterable, CustomTestStringConvertible {
        case request, data, endStream, reset, streamClosed, malformed, headersTooLarge, headerBlockOpen
        case sessionTerminating, receiveFailed, flushed, sessionDone, drain, goAwayReceived, timeout, close
        var testDescription: String { rawValue }
    }

    /// A connection in `phase` with stream 1 open (a 9-byte body, 3 bytes of it sent), except
    /// where the phase ended it.
    static func harness(in phase: StartPhase) -> H2Harness {
        let harness = H2Harness()
        harness.request(1, fields: [("content-length", "9")])
        harness.data(1, "abc")
        switch phase {
        case .open: break
        case .draining: harness.drain()
        case .goAwayReceived: harness.machine.goAwayReceived(lastStreamID: 1)
        case .closing: harness.receiveFailed(flood: false)
        case .closed: harness.close()
        }
        return harness
    }

    static func send(_ event: Event, to harness: H2Harness) {
        switch event {
        case .request: harness.request(3, method: "GET", endStream: true)
        case .data: harness.data(1, "def")
        case .endStream: harness.endStream(1)
        case .reset: harness.reset(1)
        case .streamClosed: harness.streamClosed(1)
        case .malformed: harness.malformed(1)
        case .headersTooLarge: harness.headersTooLarge(5)
        case .headerBlockOpen: harness.received(headerBlockOpen: true)
        case .sessionTerminating: harness.sessionTerminating()
        case .receiveFailed: harness.receiveFailed(flood: true)
        case .flushed: harness.flushed(socketOutput: 100)
        case .sessionDone: harness.flushed(sessionDone: true)
        case .drain: harness.drain()
        case .goAwayReceived: harness.machine.goAwayReceived(lastStreamID: 1)
        case .timeout: harness.advance(by: 600_000)
        case .close: harness.close()
        }
    }

    /// The phase a pair must lead to, where the pair decides it.
    static func expected(_ phase: StartPhase, _ event: Event) -> HTTP2ConnectionStateMachine<FakeSink>.Phase?
    {
        switch (phase, event) {
        case (.closed, _), (_, .close), (_, .timeout): .closed
        case (.closing, _): nil
        case (_, .receiveFailed): .closing(.enhanceYourCalm)
        case (_, .sessionTerminating): .closing(nil)
        case (.open, .drain): .draining
        case (.open, .goAwayReceived), (.draining, .goAwayReceived): .goAwayReceived(lastStreamID: 1)
        case (.open, .request), (.open, .data), (.open, .headersTooLarge), (.open, .flushed): .open
        default: nil
        }
    }

    @Test(arguments: StartPhase.allCases, Event.allCases)
    func everyPhaseTakesEveryEvent(phase: StartPhase, event: Event) {
        let harness = Self.harness(in: phase)
        let recordsBefore = harness.records.count
        Self.send(event, to: harness)
        if let expected = Self.expected(phase, event) {
            #expect(harness.machine.phase == expected, "\(phase) + \(event)")
        }
        if phase == .closed {
            #expect(harness.records.count == recordsBefore, "closed + \(event): nothing more is logged")
        }
        for (id, given) in harness.consumed {
            #expect(given <= harness.taken[id] ?? 0, "\(phase) + \(event): stream \(id) given back \(given)")
        }
        harness.close()
        #expect(harness.closed)
        #expect(harness.sentAfterClose == 0, "\(phase) + \(event): sent after the close")
        #expect(harness.timers.isEmpty, "\(phase) + \(event): timers left armed: \(harness.timers)")
        #expect(
            harness.exchangeRecords.count == harness.exchangesStarted,
            "\(phase) + \(event): \(harness.exchangeRecords.count) records for \(harness.exchangesStarted) exchanges"
        )
        let ids = harness.exchangeRecords.compactMap(\.clientProtocol.streamID)
        #expect(Set(ids).count == ids.count, "\(phase) + \(event): one record per stream")
    }
}
