public import HTTP1
import HTTPCore
public import UploadRules

/// One HTTP/1.1 client connection as a value-type state machine: reads request heads in
/// order (keep-alive, pipelining), hosts the current `Exchange`, and owns half-close,
/// lingering close and the header and idle timers.
///
/// Every method takes an event with the clock reading `now` (milliseconds) and appends what
/// the shell must do to `actions`; the shell executes them in order and decides nothing.
public struct HTTP1ConnectionStateMachine<Sink: RequestBodySink> {
    enum Phase: Equatable {
        case open
        /// Writing what is queued, then closing (with a lingering close when `linger`).
        case closing(linger: Bool)
        /// FIN sent; the client's bytes are read and discarded until it closes or time is up.
        case lingering
        case closed
    }

    var phase = Phase.open
    /// The exchange of the request being served.
    public internal(set) var exchange: Exchange<Sink>?
    /// The settings the next request starts with.
    var settings: ProxySettings
    var scanner: HeadScanner
    let client: [UInt8]
    /// Whether the connection is TLS (`X-Forwarded-Proto: https`).
    let secure: Bool
    let tools: RuleTools
    var random = SecureRandom()
    var date = HTTPDate()
    /// The client half-closed: it sends nothing more but may still read.
    var halfClosed = false
    /// The worker drains: no request after the current one.
    var draining = false
    /// Whether client reads are paused (while an exchange runs, the exchange's view counts).
    var readsPaused = false
    var timers = TimerSet()
    /// The buffers of the last exchange's multipart body, for the next exchange's.
    var spareBuffers: MultipartBody<Sink>.Buffers?
    /// The last client progress (a read, a drained output), for the lazily re-armed idle timer.
    var lastActivity: Int64

    /// Creates the machine for a connection accepted at `now` from `client` (its numeric
    /// address), and arms its idle timer.
    public init(
        settings: ProxySettings, client: [UInt8], secure: Bool = false, tools: RuleTools, now: Int64,
        actions: inout ActionBuffer
    ) {
        self.settings = settings
        self.client = client
        self.secure = secure
        self.tools = tools
        self.scanner = HeadScanner(limit: settings.limits.headerBytes, requireCRLF: true)
        self.lastActivity = now
        timers.start(.idle, at: now + settings.timeouts.idle, &actions)
    }

    /// Whether the connection is closed (the shell has executed or will execute `closeClient`).
    public var isClosed: Bool { phase == .closed }

    /// The `Date` value for a response sent now.
    mutating func currentDate(_ now: Int64) -> [UInt8] {
        date.value(at: now / 1000)
    }

    // MARK: client events

    /// The client sent bytes (or the connection is asked to look at its input again).
    ///
    /// - Parameter settings: the newest settings; a request starting now takes them.
    public mutating func clientReadable(
        input: some ByteSource, sink: Sink, levels: BufferLevels, settings newest: ProxySettings, now: Int64,
        actions: inout ActionBuffer
    ) {
        lastActivity = now
        switch phase {
        case .closed:
            return
        case .closing, .lingering:
            if input.count > 0 { actions.append(.discardClientInput) }
            return
        case .open:
            break
        }
        if exchange != nil {
            let date = currentDate(now)
            exchange!.clientReadable(
                input: input, sink: sink, levels: levels, date: date, now: now, actions: &actions)
        } else {
            readRequest(
                input: input, sink: sink, levels: levels, settings: newest, now: now, actions: &actions)
        }
        settle(levels, now: now, actions: &actions)
    }

    /// The client half-closed (end of file without an error).
    public mutating func clientEndOfInput(
        input: some ByteSource, sink: Sink, levels: BufferLevels, now: Int64, actions: inout ActionBuffer
    ) {
        if phase == .lingering { return close(now: now, actions: &actions) }
        guard phase != .closed else { return }
        halfClosed = true
        if !readsPaused, exchange?.client.readsPaused != true { actions.append(.pauseClientReads) }
        readsPaused = true
        guard exchange != nil else {
            switch phase {
            case .open: flushAndClose(linger: false, levels, now: now, actions: &actions)
            case .closing: phase = .closing(linger: false)  // nothing more will come
            case .lingering, .closed: break
            }
            return settle(levels, now: now, actions: &actions)
        }
        let date = currentDate(now)
        exchange!.clientFinishedSending(
            input: input, sink: sink, levels: levels, date: date, now: now, actions: &actions)
        settle(levels, now: now, actions: &actions)
    }

    /// The client connection failed (reset, error): an exchange in flight is logged as 499.
    public mutating func clientFailed(now: Int64, actions: inout ActionBuffer) {
        guard phase != .closed else { return }
        exchange?.clientGone(now: now, actions: &actions)
        close(now: now, actions: &actions)
    }

    /// The client's output drained completely.
    public mutating func clientDrained(levels: BufferLevels, now: Int64, actions: inout ActionBuffer) {
        lastActivity = now
        switch phase {
        case .closing:
            if levels.clientOutput + actions.pendingClientBytes == 0 {
                finishClosing(now: now, actions: &actions)
            }
            return
        case .open:
            exchange?.clientDrained(now: now, actions: &actions)
            settle(levels, now: now, actions: &actions)
        case .lingering, .closed:
            return
        }
    }

    /// The worker drains: an idle connection closes now, a busy one after its exchange.
    public mutating func drain(levels: BufferLevels, now: Int64, actions: inout ActionBuffer) {
        draining = true
        exchange?.client.connectionMayPersist = false
        guard phase == .open, exchange == nil else { return }
        flushAndClose(linger: false, levels, now: now, actions: &actions)
        settle(levels, now: now, actions: &actions)
    }

    // MARK: upstream events (the current exchange's)

    /// The exchange's upstream connection is ready.
    public mutating func upstreamConnected(levels: BufferLevels, now: Int64, actions: inout ActionBuffer) {
        exchange?.upstreamConnected(levels: levels, now: now, actions: &actions)
        settle(levels, now: now, actions: &actions)
    }

    /// The exchange's upstream drained its output.
    public mutating func upstreamWritable(levels: BufferLevels, now: Int64, actions: inout ActionBuffer) {
        exchange?.upstreamWritable(levels: levels, now: now, actions: &actions)
        settle(levels, now: now, actions: &actions)
    }

    /// The exchange's upstream sent bytes.
    public mutating func upstreamReadable(
        input: some ByteSource, levels: BufferLevels, now: Int64, actions: inout ActionBuffer
    ) {
        guard exchange != nil else { return }
        let date = currentDate(now)
        exchange!.upstreamReadable(input: input, levels: levels, date: date, now: now, actions: &actions)
        settle(levels, now: now, actions: &actions)
    }

    /// The exchange's upstream connection failed or closed.
    public mutating func upstreamFailed(
        _ failure: UpstreamFailure, input: some ByteSource, levels: BufferLevels, now: Int64,
        actions: inout ActionBuffer
    ) {
        guard exchange != nil else { return }
        let date = currentDate(now)
        exchange!.upstreamFailed(
            failure, input: input, levels: levels, date: date, now: now, actions: &actions)
        settle(levels, now: now, actions: &actions)
    }

    /// The loop's hashing queue reported progress (a digest is ready, or the queue drained).
    public mutating func hashingProgressed(
        sink: Sink, levels: BufferLevels, now: Int64, actions: inout ActionBuffer
    ) {
        guard exchange != nil else { return }
        let date = currentDate(now)
        exchange!.hashingProgressed(sink: sink, levels: levels, date: date, now: now, actions: &actions)
        settle(levels, now: now, actions: &actions)
    }

    /// The verdict for hold `id` of the current exchange arrived.
    public mutating func verdict(
        _ id: Int, _ verdict: Verdict, input: some ByteSource, sink: Sink, levels: BufferLevels, now: Int64,
        actions: inout ActionBuffer
    ) {
        guard exchange != nil else { return }
        let date = currentDate(now)
        exchange!.verdict(
            id, verdict, input: input, sink: sink, levels: levels, tools: tools, date: date, now: now,
            actions: &actions)
        settle(levels, now: now, actions: &actions)
    }

    /// The verdict on an inspected file of the current exchange arrived (`nil`: it could not
    /// be had).
    public mutating func fileVerdict(
        _ hold: HoldID, _ decision: HoldDecision?, sink: Sink, levels: BufferLevels, now: Int64,
        actions: inout ActionBuffer
    ) {
        guard exchange != nil else { return }
        let date = currentDate(now)
        exchange!.fileVerdict(
            hold, decision, sink: sink, levels: levels, date: date, now: now, actions: &actions)
        settle(levels, now: now, actions: &actions)
    }

    /// A local responder's work progressed (`Exchange.localProgress`).
    public mutating func localProgress(
        input: some ByteSource, levels: BufferLevels, now: Int64, actions: inout ActionBuffer
    ) {
        guard exchange != nil else { return }
        let date = currentDate(now)
        exchange!.localProgress(input: input, date: date, now: now, actions: &actions)
        settle(levels, now: now, actions: &actions)
    }
}
