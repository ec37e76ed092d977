import HTTP1
import HTTPCore
import ProxyCore
import UploadRules

/// Drives one `HTTP2ConnectionStateMachine` with a fake clock, as `HTTP2Connection` does, and
/// executes its actions through the production executor (`ActionTransport.perform`): the
/// harness is the connection's transport double (the session's side: windows, resets,
/// GOAWAY, the socket), and each stream's client and upstream I/O is a `FakeShell`.
final class H2Harness: ActionTransport {
    var machine: HTTP2ConnectionStateMachine<FakeSink>
    var actions = ActionBuffer()
    var settings: ProxySettings
    /// The fake clock, in milliseconds.
    var now: Int64 = 1_000_000
    /// Each stream's buffers, by id (kept after the stream closed, for assertions).
    var shells: [Int32: FakeShell] = [:]
    /// Request body bytes the "session" delivered per stream, and those given back.
    var taken: [Int32: Int] = [:]
    var consumed: [Int32: Int] = [:]
    /// The stream the client actions being executed belong to.
    var current: Int32 = 0
    /// The connection's timers (the streams' never reach the shell).
    var timers: [TimerID: Int64] = [:]
    var timersStarted = 0
    var resets: [(id: Int32, code: StreamResetCode, afterAnswer: Bool)] = []
    var goAways: [GoAwayCode] = []
    var shutdowns = 0
    var sessionFlushes = 0
    var closedStreams: [Int32] = []
    var discarded: [Int32] = []
    /// Streams whose DATA is no longer delivered (`discardStreamInput`): what comes for them is
    /// dropped and given back at once by the shell, outside the machine's credit.
    var undelivered: Set<Int32> = []
    var droppedAtOnce: [Int32: Int] = [:]
    /// Streams whose response waits behind the client's window (`flushed`).
    var stalled: Set<Int32> = []
    var socketReading = true
    var closed = false
    /// Actions that sent anything after the close.
    var sentAfterClose = 0
    var records: [AccessRecord] = []
    var exchangesStarted = 0
    var droppedFields = 0
    var log: [String] = []

    init(routes: RouteTable = RouteTable(), timeouts: Timeouts = Harness.timeouts, highWater: Int = 1024) {
        settings = ProxySettings(
            routes: routes, upstream: Harness.upstream, timeouts: timeouts, highWater: highWater)
        machine = HTTP2ConnectionStateMachine(
            settings: settings, client: Array("192.0.2.1".utf8), secure: true, tools: RuleTools(), now: now,
            actions: &actions)
        execute()
    }

    func shell(_ id: Int32) -> FakeShell {
        if let shell = shells[id] { return shell }
        let shell = FakeShell()
        shell.actionBytes = { [unowned self] range in actions.withBytes(range) { Array($0) } }
        shells[id] = shell
        return shell
    }

    func sink(_ id: Int32) -> FakeSink { FakeSink(shell: shell(id)) }

    // MARK: session events

    /// HEADERS for stream `id` (with END_STREAM when `endStream`).
    func request(
        _ id: Int32, method: String = "POST", path: String = "/a", authority: String? = "t",
        fields: [(String, String)] = [], endStream: Bool = false
    ) {
        let request = HTTP2Request(
            method: method, path: path, authority: authority, fields: HeaderFields(fields),
            endStream: endStream)
        _ = shell(id)
        machine.requestHead(id, request, streams: self, settings: settings, now: now, actions: &actions)
        execute()
    }

    /// DATA on stream `id`: the session writes it into the stream's input.
    func data(_ id: Int32, _ bytes: some Sequence<UInt8>) {
        let shell = shell(id)
        guard !undelivered.contains(id) else {
            droppedAtOnce[id, default: 0] += Array(bytes).count
            machine.dataArrived(id, streams: self, now: now, actions: &actions)
            return execute()
        }
        let before = shell.clientInput.count
        shell.clientInput.append(contentsOf: bytes)
        taken[id, default: 0] += shell.clientInput.count - before
        machine.dataArrived(id, streams: self, now: now, actions: &actions)
        execute()
    }

    func data(_ id: Int32, _ text: String) { data(id, Array(text.utf8)) }

    func endStream(_ id: Int32) {
        machine.endStream(id, streams: self, now: now, actions: &actions)
        execute()
    }

    func reset(_ id: Int32) {
        machine.streamReset(id, now: now, actions: &actions)
        execute()
    }

    /// The session forgot stream `id`.
    func streamClosed(_ id: Int32) {
        machine.streamClosed(id, now: now, actions: &actions)
        execute()
    }

    func malformed(_ id: Int32) {
        machine.malformed(id, detail: "malformed", now: now, actions: &actions)
        execute()
    }

    func headersTooLarge(_ id: Int32) {
        machine.headersTooLarge(id, now: now, actions: &actions)
        execute()
    }

    /// The socket's bytes were taken; `headerBlockOpen` when a header block has not ended.
    func received(headerBlockOpen: Bool = false) {
        machine.received(headerBlockOpen: headerBlockOpen, now: now, actions: &actions)
        execute()
    }

    func sessionTerminating() {
        machine.sessionTerminating(now: now, actions: &actions)
        execute()
    }

    func receiveFailed(flood: Bool, socketOutput: Int = 0) {
        machine.receiveFailed(flood: flood, socketOutput: socketOutput, now: now, actions: &actions)
        execute()
    }

    /// The shell wrote the session's frames: `socketOutput` left unwritten, `queued` bytes
    /// still in the session for `stalled` streams whose window is closed.
    func flushed(socketOutput: Int = 0, sessionDone: Bool = false, stalled: Set<Int32> = []) {
        self.stalled = stalled
        if !machine.holdsOutput(socketOutput: socketOutput, actions: &actions) {
            machine.sessionWrote(streams: self, now: now, actions: &actions)
        }
        execute()
        machine.flushed(
            socketOutput: socketOutput, sessionDone: sessionDone, queuedOutbound: stalled.isEmpty ? 0 : 1,
            streams: self, now: now, actions: &actions)
        execute()
    }

    func socketDrained() {
        machine.socketDrained(socketOutput: 0, now: now, actions: &actions)
        execute()
    }

    func drain() {
        machine.drain(now: now, actions: &actions)
        execute()
    }

    func close() {
        machine.close(now: now, actions: &actions)
        execute()
    }

    // MARK: exchange events

    func upstreamConnects(_ id: Int32) {
        shell(id).upstream = .connected
        exchangeIO(id, .upstreamConnected)
        execute()
    }

    func upstreamDrains(_ id: Int32) {
        shell(id).upstreamReadsAll()
        exchangeIO(id, .upstreamWritable)
        execute()
    }

    func upstreamSends(_ id: Int32, _ text: String) {
        let shell = shell(id)
        shell.upstreamInput.append(text)
        guard shell.upstreamReading, shell.upstream == .connected else { return }
        exchangeIO(id, .upstreamReadable)
        execute()
    }

    /// The client reads stream `id`'s response; streams waiting for that read on.
    func clientReads(_ id: Int32) {
        shell(id).clientReadsAll()
        flushed()
    }

    /// Moves the clock on by `milliseconds`, firing due connection timers earliest first.
    func advance(by milliseconds: Int64) {
        let end = now + milliseconds
        while let (id, deadline) = timers.filter({ $0.value <= end }).min(by: { $0.value < $1.value }) {
            timers[id] = nil
            now = max(now, deadline)
            machine.timer(id, now: now, actions: &actions)
            execute()
        }
        now = end
    }

    /// Reports `event` of stream `id`'s exchange I/O, as a stream host does.
    func exchangeIO(_ id: Int32, _ event: ExchangeIOEvent) {
        machine.exchangeIO(
            id, event, upstream: shell(id).upstreamInput, streams: self, now: now, actions: &actions)
    }

    func execute() {
        while let action = actions.next() {
            log.append(String(describing: action).prefix { $0 != "(" }.description)
            perform(action)
        }
    }

    /// The exchange records (not refusals).
    var exchangeRecords: [AccessRecord] { records.filter { $0.requestID != nil } }
}

extension H2Harness {
    private var currentShell: FakeShell? { current == 0 ? nil : shell(current) }

    func sendClient(_ range: Range<Int>) {
        if closed { sentAfterClose += 1 }
        currentShell?.sendClient(range)
    }

    func respondClient(_ head: StreamResponseHead) {
        if closed { sentAfterClose += 1 }
        currentShell?.respondClient(head)
    }

    func endClientStream() { currentShell?.endClientStream() }

    func setClientReading(_ reading: Bool) {
        if current == 0 { socketReading = reading } else { currentShell?.setClientReading(reading) }
    }

    func processClientInput() { machine.processInput(current, streams: self, now: now, actions: &actions) }

    func discardClientInput() { currentShell?.discardClientInput() }

    func moveRequestBody(_ count: Int, to destination: BodyDestination) {
        if closed { sentAfterClose += 1 }
        currentShell?.moveRequestBody(count, to: destination)
    }

    func shutdownClientWrite() {}
    func closeClient() { closed = true }
    func connectUpstream(_ target: UpstreamURL) { currentShell?.connectUpstream(target) }

    func sendUpstream(_ range: Range<Int>) {
        if closed { sentAfterClose += 1 }
        currentShell?.sendUpstream(range)
    }

    func moveStagingToUpstream() { currentShell?.moveStagingToUpstream() }
    func sendSpoolsUpstream(skip: Int64) { currentShell?.sendSpoolsUpstream(skip: skip) }
    func moveResponseBody(_ count: Int) { currentShell?.moveResponseBody(count) }
    func setUpstreamReading(_ reading: Bool) { currentShell?.setUpstreamReading(reading) }

    func processUpstreamInput() { exchangeIO(current, .upstreamReadable) }

    func releaseUpstream() { currentShell?.releaseUpstream() }
    func abortUpstream() { currentShell?.abortUpstream() }

    func startTimer(_ id: TimerID, deadline: Int64) {
        timers[id] = deadline
        timersStarted += 1
    }

    func cancelTimer(_ id: TimerID) { timers[id] = nil }
    func consultCheck(_ index: Int, _ consultation: Consultation) {}
    func consultFile(_ request: FileVerdictRequest, _ inspection: any FileInspection) {}
    func exchangeStarted() { exchangesStarted += 1 }
    func finish() { records.append(actions.takeFinishedRecord()) }
    func droppedUnderscoreFields(_ count: Int) { droppedFields += count }

    func selectStream(_ id: Int32) { current = id }

    func settleStream(_ id: Int32) { machine.streamSettled(id, streams: self, now: now, actions: &actions) }

    func consumeWindow(_ id: Int32, _ count: Int) { consumed[id, default: 0] += count }

    func resetStream(_ id: Int32, _ code: StreamResetCode, afterAnswer: Bool) {
        resets.append((id, code, afterAnswer))
    }

    func discardStreamInput(_ id: Int32) {
        discarded.append(id)
        undelivered.insert(id)
        shells[id]?.clientInput.bytes.removeAll()
    }

    func closeStream(_ id: Int32) { closedStreams.append(id) }
    func goAway(_ code: GoAwayCode) { goAways.append(code) }
    func shutdownSession() { shutdowns += 1 }
    func flushSession() { sessionFlushes += 1 }
}

/// The streams' buffers as the machine reads them: each stream's `FakeShell`.
extension H2Harness: HTTP2Streams {
    func input(_ id: Int32) -> ArraySource { shell(id).clientInput }
    func takenCount(_ id: Int32) -> Int? { taken[id] }
    func levels(_ id: Int32) -> BufferLevels { shell(id).levels }
    func isStalled(_ id: Int32) -> Bool { stalled.contains(id) }
}
