import HTTP1
import HTTPCore
import UploadRules

/// One HTTP/2 client connection as a value-type state machine: its phase (open, draining,
/// GOAWAY received, closing), the stream table (each stream's `Exchange` and its window
/// credit), the connection's deadlines (idle, header block, stall) and one timer for all the
/// streams' deadlines, the refusals answered before an exchange, and the h2 → HTTP/1.1 head
/// translation.
///
/// The frame codec (libnghttp2) stays in the shell: it reports the session's events here with
/// the clock reading `now`, and executes the actions that come back in order. The exchange
/// actions of a stream follow a `stream(id)` action; its timers never reach the shell (they
/// are kept in the stream's `deadlines`, and `TimerID.streams` is armed for the earliest).
public struct HTTP2ConnectionStateMachine<Sink: RequestBodySink> {
    /// Where the connection stands.
    public enum Phase: Equatable, Sendable {
        case open
        /// The worker drains: a graceful GOAWAY went; open streams finish, then it closes.
        case draining
        /// The client sent GOAWAY: streams up to `lastStreamID` finish.
        case goAwayReceived(lastStreamID: Int32)
        /// The connection closes once its output is written: after a GOAWAY with `code`, or
        /// (`nil`) when the session has nothing left to do.
        case closing(GoAwayCode?)
        case closed
    }

    /// One stream with its exchange.
    struct StreamState {
        enum Phase: Equatable {
            /// The exchange runs.
            case active
            /// The exchange ended (its outcome acted on); the session still sends its answer.
            case finishing
        }

        var exchange: Exchange<Sink>
        var phase = Phase.active
        /// Request body bytes the session handed to the stream's input, and those given back to
        /// its window (`consumeWindow`): never more than taken.
        var taken: Int64 = 0
        var consumed: Int64 = 0
        /// The exchange's armed timers.
        var deadlines = Deadlines()
    }

    public internal(set) var phase = Phase.open
    var streams = StreamSlots<StreamState>()
    /// Streams whose exchange runs (`StreamState.Phase.active`).
    public internal(set) var activeCount = 0
    /// The settings the next stream starts with (and the connection's timeouts).
    var settings: ProxySettings
    let client: [UInt8]
    /// Whether the connection is TLS (`X-Forwarded-Proto: https`).
    let secure: Bool
    let tools: RuleTools
    var random = SecureRandom()
    var date = HTTPDate()
    var timers = TimerSet()
    /// The deadline `TimerID.streams` is armed for (a deadline cancelled meanwhile makes it
    /// fire for nothing once).
    var streamsTimerDeadline: Int64?
    /// When the header block in progress began.
    var headerBlockSince: Int64?
    /// When the output began to be held, or a response to wait behind a closed window.
    var stalledSince: Int64?
    /// Reading the socket stopped because the client does not take what was written.
    var outputHeld = false

    /// Creates the machine for a connection accepted at `now` from `client` (its numeric
    /// address), and arms its idle timer.
    public init(
        settings: ProxySettings, client: [UInt8], secure: Bool, tools: RuleTools, now: Int64,
        actions: inout ActionBuffer
    ) {
        self.settings = settings
        self.client = client
        self.secure = secure
        self.tools = tools
        timers.start(.idle, at: now + settings.timeouts.idle, &actions)
    }

    /// Whether the connection is closed (the shell has executed or will execute `closeClient`).
    public var isClosed: Bool { phase == .closed }

    /// Stream `id`'s upload for the live view, while its exchange runs.
    public func liveStatus(_ id: Int32) -> LiveStatus? {
        streams.read(id) { $0.phase == .active ? $0.exchange.liveStatus : nil } ?? nil
    }

    /// The window credit of stream `id`: bytes taken from the session, and given back.
    public func credit(_ id: Int32) -> (taken: Int64, consumed: Int64)? {
        streams.read(id) { ($0.taken, $0.consumed) }
    }

    /// The `Date` value for a response sent now.
    mutating func currentDate(_ now: Int64) -> [UInt8] {
        date.value(at: now / 1000)
    }

    // MARK: connection events

    /// The session took what the socket read and its events were reported: `timeouts.header`
    /// runs from the start of a header block that has not ended (the connection can carry
    /// nothing else until it does), else `timeouts.idle` while no stream is open.
    public mutating func received(headerBlockOpen: Bool, now: Int64, actions: inout ActionBuffer) {
        guard phase != .closed else { return }
        if headerBlockOpen {
            guard headerBlockSince == nil else { return }
            headerBlockSince = now
            timers.cancel(.idle, &actions)
            return timers.start(.header, at: now + settings.timeouts.header, &actions)
        }
        if headerBlockSince != nil {
            headerBlockSince = nil
            timers.cancel(.header, &actions)
        }
        updateIdleTimer(now: now, reset: true, &actions)
    }

    /// Arms the idle timer while no stream is open (afresh with `reset`), disarms it otherwise.
    mutating func updateIdleTimer(now: Int64, reset: Bool, _ actions: inout ActionBuffer) {
        guard headerBlockSince == nil else { return }
        if activeCount > 0 {
            timers.cancel(.idle, &actions)
        } else if reset || !timers.contains(.idle) {
            timers.start(.idle, at: now + settings.timeouts.idle, &actions)
        }
    }

    /// The session refused what the client sent (a flood, a protocol violation): a GOAWAY
    /// with ENHANCE_YOUR_CALM for a flood, PROTOCOL_ERROR otherwise; every stream's exchange
    /// ends as the client's leaving; the connection closes once the GOAWAY is written, at
    /// once when the client does not read (`socketOutput` over the high watermark).
    public mutating func receiveFailed(
        flood: Bool, socketOutput: Int, now: Int64, actions: inout ActionBuffer
    ) {
        guard phase != .closed else { return }
        let code: GoAwayCode = flood ? .enhanceYourCalm : .protocolError
        actions.append(.goAway(code))
        endAllStreams(now: now, &actions)
        phase = .closing(code)
        if socketOutput > settings.highWater { close(now: now, actions: &actions) }
    }

    /// The session wrote a GOAWAY with an error code (a connection error libnghttp2 found by
    /// itself: an RST_STREAM or PING of the wrong length, a PUSH_PROMISE from the client):
    /// every stream's exchange ends as the client's leaving (its upstream aborted), and the
    /// connection closes once the GOAWAY is written, not after `timeouts.idle`.
    public mutating func sessionTerminating(now: Int64, actions: inout ActionBuffer) {
        guard phase != .closed, !phase.isClosing else { return }
        endAllStreams(now: now, &actions)
        phase = .closing(nil)
    }

    /// The client sent GOAWAY: streams up to `lastStreamID` finish; the session says when
    /// it is done (`flushed`).
    public mutating func goAwayReceived(lastStreamID: Int32) {
        guard phase == .open || phase == .draining else { return }
        phase = .goAwayReceived(lastStreamID: lastStreamID)
    }

    /// The worker drains: a graceful GOAWAY; open streams finish.
    public mutating func drain(now: Int64, actions: inout ActionBuffer) {
        guard phase == .open || phase.isGoAwayReceived else { return }
        phase = .draining
        actions.append(.shutdownSession)
    }

    /// Closes the connection (the socket failed or ended, a deadline passed, the worker
    /// stops): every exchange in flight ends as the client's leaving.
    public mutating func close(now: Int64, actions: inout ActionBuffer) {
        guard phase != .closed else { return }
        endAllStreams(now: now, &actions)
        phase = .closed
        timers.cancelAll(&actions)
        streamsTimerDeadline = nil
        actions.append(.closeClient)
    }

    /// Every running exchange hears that its client left.
    mutating func endAllStreams(now: Int64, _ actions: inout ActionBuffer) {
        var armed: Int64?
        streams.forEachStream { id, state in
            guard state.phase == .active else { return }
            armed = Self.earliest(armed, state.run(id, &actions) { $0.clientGone(now: now, actions: &$1) })
            actions.append(.settleStream(id))
        }
        armStreamsTimer(armed, &actions)
    }

    /// A timer fired.
    public mutating func timer(_ id: TimerID, now: Int64, actions: inout ActionBuffer) {
        guard timers.fired(id), phase != .closed else { return }
        switch id {
        case .streams:
            streamDeadlinesDue(now: now, &actions)
        case .idle, .header:
            guard activeCount == 0 || headerBlockSince != nil else { return }
            closeWithGoAway(now: now, &actions)
        case .stall:
            guard stalledSince != nil else { return }
            closeWithGoAway(now: now, &actions)
        case .linger, .upstreamConnect, .upstreamResponse, .verdict, .fileVerdict, .bodyTotal:
            break
        }
    }

    /// An orderly close: GOAWAY NO_ERROR written, then the socket closed.
    mutating func closeWithGoAway(now: Int64, _ actions: inout ActionBuffer) {
        actions.append(.goAway(.noError))
        actions.append(.flushSession)
        close(now: now, actions: &actions)
    }

    /// Reports every stream deadline due at `now`, earliest first per stream, and arms the
    /// streams' timer again for the earliest left.
    mutating func streamDeadlinesDue(now: Int64, _ actions: inout ActionBuffer) {
        streamsTimerDeadline = nil
        let date = currentDate(now)
        var next: Int64?
        streams.forEachStream { id, state in
            guard state.phase == .active else { return }
            var fired = false
            while state.exchange.outcome == nil, let timer = state.deadlines.takeDue(now: now) {
                _ = state.run(id, &actions) { $0.timer(timer, date: date, now: now, actions: &$1) }
                fired = true
            }
            if fired { actions.append(.settleStream(id)) }
            next = Self.earliest(next, state.deadlines.earliest)
        }
        armStreamsTimer(next, &actions)
    }

    /// Arms `TimerID.streams` for `deadline` when it is earlier than what it is armed for.
    mutating func armStreamsTimer(_ deadline: Int64?, _ actions: inout ActionBuffer) {
        guard let deadline, phase != .closed else { return }
        if let armed = streamsTimerDeadline, armed <= deadline { return }
        streamsTimerDeadline = deadline
        timers.start(.streams, at: deadline, &actions)
    }

    static func earliest(_ first: Int64?, _ second: Int64?) -> Int64? {
        guard let first else { return second }
        guard let second else { return first }
        return min(first, second)
    }
}

extension HTTP2ConnectionStateMachine.Phase {
    var isGoAwayReceived: Bool {
        if case .goAwayReceived = self { return true }
        return false
    }

    var isClosing: Bool {
        if case .closing = self { return true }
        return false
    }
}

extension HTTP2ConnectionStateMachine.StreamState {
    /// Runs `event` on the exchange after a `stream(id)` action, and takes the timer actions
    /// it appended into `deadlines`; returns the earliest deadline it armed.
    mutating func run(
        _ id: Int32, _ actions: inout ActionBuffer,
        _ event: (inout Exchange<Sink>, inout ActionBuffer) -> Void
    ) -> Int64? {
        let mark = actions.appendedCount
        actions.append(.stream(id))
        event(&exchange, &actions)
        var armed: Int64?
        actions.takeTimerActions(from: mark) { action in
            switch action {
            case .startTimer(let timer, let deadline):
                deadlines.start(timer, at: deadline)
                armed = min(armed ?? deadline, deadline)
            case .cancelTimer(let timer):
                deadlines.cancel(timer)
            default:
                break
            }
        }
        return armed
    }
}
