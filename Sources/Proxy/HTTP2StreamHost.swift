import EventLoop
import HTTP2
import HTTPIO
import ProxyCore
import UploadRules

/// One HTTP/2 stream's I/O: the request body as the session delivers it, and its exchange's
/// upstream connection, spools and auth check. Its events go to the connection's state
/// machine by stream id; it decides nothing.
final class HTTP2StreamHost {
    let id: Int32
    /// Strong (the connection drops its streams when they close, or when it does): an
    /// unowned reference cost a checked retain on every access.
    let connection: HTTP2Connection
    let io: ExchangeIO
    /// Request body bytes the session delivered and the exchange has not handed on.
    let input = OwnedEvBuffer()

    init(id: Int32, connection: HTTP2Connection) {
        self.id = id
        self.connection = connection
        io = ExchangeIO(worker: connection.worker)
        // DATA goes straight into `input` from now on (what came before the head, now).
        connection.session.deliverInbound(streamID: id, to: input)
    }

    var sink: BodySink { BodySink(io) }
    /// What the session has written into `input` so far.
    var taken: Int? { connection.session.takenCount(streamID: id) }
    var levels: BufferLevels {
        io.levels(
            clientOutput: connection.streamOutput.buffer.count
                + connection.session.outboundCount(streamID: id))
    }

    /// The stream is over: its DATA is no longer delivered, its exchange's I/O goes.
    func close() {
        connection.session.deliverInbound(streamID: id, to: nil)
        io.close()
    }
}

extension HTTP2StreamHost: ExchangeHost {
    func execute() { connection.execute() }

    var clientOutput: EvBuffer { connection.streamOutput.buffer }
    var isServing: Bool { !connection.closed && connection.machine.isServing(id) }

    func reportUpstreamConnected() {
        connection.machine.upstreamConnected(
            id, levels: levels, now: connection.now, actions: &connection.actions)
    }

    func reportUpstreamWritable() {
        connection.machine.upstreamWritable(
            id, levels: levels, now: connection.now, actions: &connection.actions)
    }

    func reportUpstreamReadable() {
        guard let upstream = io.upstream else { return }
        connection.machine.upstreamReadable(
            id, input: upstream.socket.input, levels: levels, now: connection.now,
            actions: &connection.actions)
    }

    func reportUpstreamFailed(_ failure: UpstreamFailure) {
        if let upstream = io.upstream {
            connection.machine.upstreamFailed(
                id, failure, input: upstream.socket.input, levels: levels, now: connection.now,
                actions: &connection.actions)
        } else {
            connection.machine.upstreamFailed(
                id, failure, input: NoBytes(), levels: levels, now: connection.now,
                actions: &connection.actions)
        }
    }

    func reportVerdict(_ index: Int, _ verdict: Verdict) {
        connection.machine.verdict(
            id, index, verdict, input: input.buffer, sink: sink, levels: levels, now: connection.now,
            actions: &connection.actions)
    }

    func reportFileVerdict(_ hold: HoldID, _ decision: HoldDecision?) {
        connection.machine.fileVerdict(
            id, hold, decision, sink: sink, levels: levels, now: connection.now, actions: &connection.actions)
    }

}
