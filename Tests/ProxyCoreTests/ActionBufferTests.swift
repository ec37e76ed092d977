import ProxyCore
import Testing

/// What an HTTP/2 connection's one action buffer tells its state machine about a stream's
/// queued moves: a settle queued before another batch of the stream's moves must not read the
/// input those moves will take (a 1 GiB h2 upload was refused as "more DATA than the
/// request's content-length" when it did: the bytes were claimed twice).
@Suite struct ActionBufferTests {
    @Test func movesOfAStreamArePendingUntilTaken() {
        var actions = ActionBuffer()
        actions.append(.stream(1))
        actions.append(.settleStream(1))
        actions.append(.stream(3))
        actions.append(.moveRequestBody(10, to: .upstream))
        actions.append(.stream(1))
        actions.append(.moveRequestBody(20, to: .upstream))
        actions.append(.settleStream(1))
        #expect(actions.movesPending(forStream: 1))
        #expect(actions.movesPending(forStream: 3))
        #expect(!actions.movesPending(forStream: 5))
        while let action = actions.next() {
            if case .settleStream = action { break }
        }
        #expect(actions.movesPending(forStream: 1), "the first settle runs before stream 1's later moves")
        while let action = actions.next() {
            if case .moveRequestBody(20, _) = action { break }
        }
        #expect(!actions.movesPending(forStream: 1))
        #expect(!actions.movesPending(forStream: 3))
    }

    @Test func movesBeforeAnyStreamActionAreTheCurrentStreams() {
        var actions = ActionBuffer()
        actions.append(.moveRequestBody(4, to: .staging))
        #expect(actions.movesPending(forStream: 7))
        _ = actions.next()
        #expect(!actions.movesPending(forStream: 7))
    }
}
