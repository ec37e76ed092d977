import HTTP1
import HTTPCore

extension HTTP2ConnectionStateMachine {
    /// The shell executed stream `id`'s actions so far (`settleStream`); its input holds what
    /// is left of the DATA taken. DATA that waited while the exchange paused is read now (no
    /// other frame may come to wake it while the stream's window is shut); what the exchange
    /// handed on goes back to the window; an exchange that ended has its stream reset as its
    /// outcome says, and what is left of its body dropped and given back.
    public mutating func streamSettled(
        _ id: Int32, streams io: some HTTP2Streams<Sink>, now: Int64, actions: inout ActionBuffer
    ) {
        guard phase != .closed else { return }
        let date = currentDate(now)
        let input = io.input(id)
        var armed: Int64?
        let result = streams.update(id) { state -> SettleResult in
            if let taken = io.takenCount(id) { state.taken = Int64(taken) }
            guard state.phase == .active else { return .idle }
            // A settle queued before another batch of this stream's moves must not read the
            // input those moves will take: that batch's own settle reads after them.
            if state.exchange.outcome == nil, input.count > 0, state.exchange.readsBody,
                !state.exchange.client.readsPaused, !actions.movesPending(forStream: id)
            {
                let waiting = input.count
                let before = actions.appendedCount
                armed = state.run(id, &actions) {
                    $0.clientReadable(
                        input: input, sink: io.sink(id), levels: io.levels(id), date: date, now: now,
                        actions: &$1)
                }
                if actions.appendedCount > before + 1 || input.count != waiting {
                    actions.append(.settleStream(id))
                    return .again
                }
            }
            state.giveBack(id, held: Int64(input.count), &actions)
            guard state.exchange.outcome != nil else { return .idle }
            state.finish(id, &actions)
            return .ended
        }
        armStreamsTimer(armed, &actions)
        guard result == .ended else { return }
        activeCount -= 1
        updateIdleTimer(now: now, reset: false, &actions)
    }

    enum SettleResult { case idle, again, ended }
}

extension HTTP2ConnectionStateMachine.StreamState {
    /// Gives back to the window what the exchange handed on: what was taken, less what the
    /// input still holds and what was given back already.
    mutating func giveBack(_ id: Int32, held: Int64, _ actions: inout ActionBuffer) {
        let handedOn = taken - held - consumed
        guard handedOn > 0 else { return }
        actions.append(.consumeWindow(id, Int(handedOn)))
        consumed += handedOn
    }

    /// The exchange ended: the stream is reset as the outcome says (after the answer for
    /// NO_ERROR, RFC 9113 §8.1), its DATA is dropped from now on, and what its input held goes
    /// back to the window.
    mutating func finish(_ id: Int32, _ actions: inout ActionBuffer) {
        phase = .finishing
        deadlines.removeAll()
        if let code = exchange.streamReset {
            actions.append(.resetStream(id, code, afterAnswer: code == .noError))
        }
        actions.append(.discardStreamInput(id))
        if taken > consumed {
            actions.append(.consumeWindow(id, Int(taken - consumed)))
            consumed = taken
        }
    }
}
