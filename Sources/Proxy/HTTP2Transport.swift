import EventLoop
import HTTP2
import HTTPCore
import HTTPIO
import ProxyCore

/// An HTTP/2 connection as the executor's transport: the client is the stream the last
/// `stream` action named (`current`), its input the stream's DATA, its output the session's
/// queue for it; stream 0 is the connection, whose socket reading pauses. It executes the
/// connection's queued actions (`run()`) on the connection's session, streams and socket.
final class HTTP2Transport: ExchangeTransport {
    /// Strong, as `HTTP2StreamHost.connection` is: a checked unowned reference cost a retain
    /// on every access, several per action. The connection lets its transport go when it
    /// closes (`HTTP2Connection.tearDown()`).
    let connection: HTTP2Connection
    /// The connection's session and socket, held here too: reached through `connection`, every
    /// call on them retained and released them (release build, `objdump`).
    let session: HTTP2ServerSession
    let socket: BufferedSocket
    /// The stream the client actions being executed belong to (`ProxyAction.stream`).
    var current: Int32 = 0

    init(connection: HTTP2Connection) {
        self.connection = connection
        session = connection.session
        socket = connection.socket
    }

    var worker: Worker { connection.worker }

    /// Executes the connection's queued actions in order (actions that report back queue
    /// more); once it closed, what is left is dropped.
    func run() {
        while let action = connection.actions.next() {
            if connection.closed { continue }
            perform(action)
        }
    }

    var currentHost: (any ExchangeHost)? { connection.streams[current] }
    var currentInput: EvBuffer? { connection.streams[current]?.input.buffer }

    func sendClient(_ range: Range<Int>) {
        let id = current
        connection.actions.withBytes(range) { session.send(streamID: id, bytes: $0) }
    }

    /// The response head goes into the session: HEADERS (with END_STREAM when no body
    /// follows), or an interim 1xx. A stream the session no longer has is gone for its
    /// exchange too.
    func respondClient(_ head: StreamResponseHead) {
        if head.status < 200 {
            try? session.informational(
                streamID: current, status: head.status, fields: head.headers)
            return
        }
        do throws(HTTP2Error) {
            try session.respond(
                streamID: current, status: head.status, fields: head.headers, hasBody: !head.endsStream)
        } catch {
            connection.machine.streamReset(current, now: connection.now, actions: &connection.actions)
        }
    }

    func endClientStream() { session.endStream(streamID: current) }

    /// Stream 0: the socket. A stream's DATA is handed to its exchange as the exchange's own
    /// view says (`client.readsPaused`), and its window opens only as bytes are handed on.
    func setClientReading(_ reading: Bool) {
        if current == 0 { socket.setReading(reading) }
    }

    func processClientInput() {
        connection.machine.processInput(
            current, streams: connection, now: connection.now, actions: &connection.actions)
    }

    /// A stream is ended by its outcome (the machine's resets), never by a connection close.
    func shutdownClientWrite() {}

    func closeClient() { connection.tearDown() }

    func sendUpstream(_ range: Range<Int>) {
        guard let upstream = connection.streams[current]?.io.upstream else { return }
        connection.actions.withBytes(range) { upstream.socket.output.add($0) }
    }

    /// Hands the response bytes moved from the upstream to the session's queue for the stream.
    func responseBodyMoved() {
        let buffer = connection.streamOutput.buffer
        guard buffer.count > 0 else { return }
        let id = current
        buffer.forEachChunk { chunk in
            session.send(streamID: id, bytes: chunk)
            return true
        }
        buffer.drain(buffer.count)
    }

    func startTimer(_ id: TimerID, deadline: Int64) { connection.timers.start(id, deadline: deadline) }

    func cancelTimer(_ id: TimerID) { connection.timers.cancel(id) }

    func finish() {
        let record = connection.actions.takeFinishedRecord()
        let io = record.clientProtocol.streamID.flatMap { connection.streams[$0]?.io }
        log(record, io: io, peer: connection.peer, peerHost: connection.peerHost)
    }

    // MARK: the connection's own

    func selectStream(_ id: Int32) { current = id }

    func settleStream(_ id: Int32) {
        connection.machine.streamSettled(
            id, streams: connection, now: connection.now, actions: &connection.actions)
    }

    func consumeWindow(_ id: Int32, _ count: Int) { session.consume(streamID: id, count: count) }

    func resetStream(_ id: Int32, _ code: StreamResetCode, afterAnswer: Bool) {
        let errorCode = HTTP2ErrorCode(rawValue: code.rawValue)
        if afterAnswer {
            try? session.resetWhenAnswered(streamID: id, code: errorCode)
        } else {
            try? session.reset(streamID: id, code: errorCode)
        }
    }

    /// Stops delivering `id`'s DATA, drops what its input holds (the machine gives it back to
    /// the window), and drops what the session still queues for it, given back at once.
    func discardStreamInput(_ id: Int32) {
        session.deliverInbound(streamID: id, to: nil)
        if let stream = connection.streams[id] { stream.input.buffer.drain(stream.input.buffer.count) }
        let count = session.inboundCount(streamID: id)
        guard count > 0 else { return }
        var discard = CountingSink()
        _ = session.readInbound(streamID: id, into: &discard)
        session.consume(streamID: id, count: count)
    }

    func closeStream(_ id: Int32) { connection.streams.removeValue(forKey: id)?.close() }

    func goAway(_ code: GoAwayCode) {
        try? session.goAway(code: HTTP2ErrorCode(rawValue: code.rawValue))
    }

    func shutdownSession() { try? session.shutdown() }

    func flushSession() { connection.writeSession() }
}
