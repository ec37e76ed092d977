import HTTP1
import HTTP2
import HTTPCore
import ProxyCore

/// One stream's `Exchange` behind the session, driven as `HTTP2StreamHost` drives it: DATA
/// delivered into `input`, the exchange's actions executed in memory, its answer sent on the
/// stream, and the window given back only for what the exchange handed on. The upstream
/// connects at once, reads everything, and answers `200` once the client ended its stream.
final class FuzzStream {
    static let date = Array("Tue, 01 Dec 2026 18:00:00 GMT".utf8)
    static let answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    let id: Int32
    unowned let session: HTTP2ServerSession
    var exchange: Exchange<CountingBodySink>
    var actions = ActionBuffer()
    let input = MemoryBuffer()
    let upstreamInput = MemoryBuffer()
    var upstreamBytes = 0
    var staging = 0
    var spool: Int64 = 0
    var fileSpool: Int64 = 0
    var timers: [TimerID: Int64] = [:]
    private var connecting = false
    private var connected = false
    private var answered = false
    /// What `input` held when the exchange last read it without taking anything.
    private var lastSeen = -1
    private var taken = 0
    private var consumed = 0
    private(set) var finished = false
    private(set) var records = 0
    let now: Int64 = 1_000_000

    init(
        id: Int32, head: RequestHead, framing: BodyFraming, session: HTTP2ServerSession,
        settings: ProxySettings
    ) {
        self.id = id
        self.session = session
        exchange = Exchange(
            head: head, framing: framing, settings: settings, requestID: "fuzz",
            client: Array("192.0.2.1".utf8),
            secure: false, clientProtocol: .http2(streamID: id), now: now)
        session.deliverInbound(streamID: id, to: input)
        exchange.start(
            input: input, sink: sink, levels: levels, tools: RuleTools(), date: Self.date, now: now,
            actions: &actions)
        step()
    }

    var sink: CountingBodySink { CountingBodySink(stream: self) }

    var levels: BufferLevels {
        BufferLevels(
            clientOutput: session.outboundCount(streamID: id), upstreamOutput: 0, staging: staging,
            spool: spool,
            fileSpool: fileSpool)
    }

    // MARK: events

    func dataArrived() {
        guard !finished else { return discard() }
        guard !exchange.client.readsPaused else { return step() }
        exchange.clientReadable(
            input: input, sink: sink, levels: levels, date: Self.date, now: now, actions: &actions)
        step()
    }

    func endOfStream() {
        guard !finished else { return }
        exchange.clientFinishedSending(
            input: input, sink: sink, levels: levels, date: Self.date, now: now, actions: &actions)
        step()
    }

    func clientGone() {
        guard !finished else { return }
        exchange.clientGone(now: now, actions: &actions)
        step()
    }

    /// The session forgot the stream: its exchange must have ended (here, if not before).
    func streamClosed() {
        clientGone()
        session.deliverInbound(streamID: id, to: nil)
        precondition(finished && records == 1, "stream \(id) closed with its exchange open")
    }

    /// DATA after the exchange ended: read and given back at once.
    private func discard() {
        var dropped = CountingSink()
        let count = session.readInbound(streamID: id, into: &dropped)
        session.consume(streamID: id, count: count)
        taken += count
        consumed += count
    }

    /// Every timer the exchange still runs fires, at its deadline.
    func fireTimers() {
        while !finished, let (timer, deadline) = timers.min(by: { $0.value < $1.value }) {
            timers[timer] = nil
            exchange.timer(timer, date: Self.date, now: deadline, actions: &actions)
            step()
        }
    }

    // MARK: executing

    /// Runs the actions, lets the upstream connect and answer once the body was read, and
    /// reads DATA held while the exchange paused, until nothing moves; then settles the window.
    private func step() {
        var rounds = 0
        while true {
            rounds += 1
            precondition(rounds < 10_000, "stream \(id): the exchange does not settle")
            execute()
            guard !finished, exchange.outcome == nil else { break }
            if connecting {
                connecting = false
                connected = true
                exchange.upstreamConnected(levels: levels, now: now, actions: &actions)
            } else if connected, !answered, !exchange.readsBody {
                answered = true
                upstreamInput.write(Self.answer)
                exchange.upstreamReadable(
                    input: upstreamInput, levels: levels, date: Self.date, now: now, actions: &actions)
            } else if exchange.readsBody, !exchange.client.readsPaused, input.count > 0,
                input.count != lastSeen
            {
                lastSeen = input.count
                exchange.clientReadable(
                    input: input, sink: sink, levels: levels, date: Self.date, now: now, actions: &actions)
            } else {
                break
            }
        }
        lastSeen = -1
        settle()
    }

    private func execute() {
        while let action = actions.next() {
            perform(action)
        }
    }

    private func perform(_ action: ProxyAction) {
        switch action {
        case .sendClient(let range):
            actions.withBytes(range) { session.send(streamID: id, bytes: $0) }
        case .respondClient(let head):
            if head.status < 200 {
                try? session.informational(streamID: id, status: head.status, fields: head.headers)
            } else if (try? session.respond(
                streamID: id, status: head.status, fields: head.headers, hasBody: !head.endsStream)) == nil
            {
                exchange.clientGone(now: now, actions: &actions)
            }
        case .endClientStream:
            session.endStream(streamID: id)
        case .processClientInput:
            exchange.clientReadable(
                input: input, sink: sink, levels: levels, date: Self.date, now: now, actions: &actions)
        case .resumeClientReads where input.count > 0:
            exchange.clientReadable(
                input: input, sink: sink, levels: levels, date: Self.date, now: now, actions: &actions)
        case .discardClientInput:
            input.drain(input.count)
        case .moveRequestBody(let count, let destination):
            input.drain(count)
            if destination == .upstream { upstreamBytes += count } else { staging += count }
        case .startTimer(let timer, let deadline):
            timers[timer] = deadline
        case .cancelTimer(let timer):
            timers[timer] = nil
        case .finish:
            records += 1
        case .connectUpstream:
            connecting = true
        case .sendUpstream(let range):
            upstreamBytes += range.count
        case .moveStagingToUpstream:
            upstreamBytes += staging
            staging = 0
        case .sendSpoolsUpstream(let skip):
            upstreamBytes += Int(spool + fileSpool - skip)
        case .moveResponseBody(let count):
            upstreamInput.remove(count).withUnsafeBytes { session.send(streamID: id, bytes: $0) }
        case .processUpstreamInput:
            exchange.upstreamReadable(
                input: upstreamInput, levels: levels, date: Self.date, now: now, actions: &actions)
        case .releaseUpstream, .abortUpstream:
            connected = false
            upstreamInput.drain(upstreamInput.count)
        default:
            break
        }
    }

    /// Gives back to the window what the exchange handed on, and acts on its outcome.
    private func settle() {
        if let count = session.takenCount(streamID: id) { taken = count }
        precondition(taken - input.count >= consumed, "stream \(id): more consumed than handed on")
        if taken - input.count > consumed {
            session.consume(streamID: id, count: taken - input.count - consumed)
            consumed = taken - input.count
        }
        guard !finished, exchange.outcome != nil else { return }
        finished = true
        precondition(records == 1, "stream \(id): \(records) log records")
        if let code = exchange.streamReset {
            try? session.reset(streamID: id, code: HTTP2ErrorCode(rawValue: code.rawValue))
        }
        session.deliverInbound(streamID: id, to: nil)
        if let count = session.takenCount(streamID: id) { taken = count }
        input.drain(input.count)
        if taken > consumed {
            session.consume(streamID: id, count: taken - consumed)
            consumed = taken
        }
    }
}
