import EventLoop
import HTTPIO
import ProxyCore

extension ClientConnection: ExchangeTransport {
    /// Executes the queued actions in order (actions that report back queue more).
    func execute() {
        while let action = actions.next() {
            if closed { continue }
            perform(action)
        }
    }

    var currentHost: (any ExchangeHost)? { self }
    var currentInput: EvBuffer? { socket.input }

    func sendClient(_ range: Range<Int>) {
        actions.withBytes(range) { socket.output.add($0) }
    }

    func setClientReading(_ reading: Bool) { socket.setReading(reading) }

    func processClientInput() {
        machine.clientReadable(
            input: socket.input, sink: sink, levels: levels, settings: settings, now: now,
            actions: &actions)
    }

    func shutdownClientWrite() { socket.shutdownWrite() }

    func closeClient() {
        closed = true
        timers.stop()
        io.close()
        socket.close()
        worker.closed(self)
    }

    func sendUpstream(_ range: Range<Int>) {
        actions.withBytes(range) { io.upstream?.socket.output.add($0) }
    }

    func startTimer(_ id: TimerID, deadline: Int64) { timers.start(id, deadline: deadline) }

    func cancelTimer(_ id: TimerID) { timers.cancel(id) }

    func finish() {
        let record = actions.takeFinishedRecord()
        log(record, io: io, peer: peer, peerHost: peerHost)
    }
}
