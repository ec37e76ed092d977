import EventLoop
import HTTP2
import ProxyCore

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
    /// The machine ignores the events of a stream whose exchange ended; its upstream is no
    /// longer `io.upstream` then (released or aborted), nor after the stream closed.
    var isServing: Bool { !connection.closed }

    func report(_ event: ExchangeIOEvent) {
        connection.machine.exchangeIO(
            id, event, upstream: io.upstream?.socket.input, streams: connection, now: connection.now,
            actions: &connection.actions)
    }
}

/// The streams as the connection's state machine reads them.
extension HTTP2Connection: HTTP2Streams {
    func input(_ id: Int32) -> EvBuffer { (streams[id]?.input ?? noInput).buffer }
    func takenCount(_ id: Int32) -> Int? { session.takenCount(streamID: id) }
    func sink(_ id: Int32) -> BodySink { BodySink(streams[id]?.io ?? ExchangeIO(worker: worker)) }
    func isStalled(_ id: Int32) -> Bool { session.isPeerWindowClosed(streamID: id) }

    func levels(_ id: Int32) -> BufferLevels {
        let queued = streamOutput.buffer.count + session.outboundCount(streamID: id)
        return streams[id]?.io.levels(clientOutput: queued) ?? BufferLevels(clientOutput: queued)
    }
}
