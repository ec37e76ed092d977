import HTTP1
import ProxyCore

/// Drives one `HTTP1ConnectionStateMachine` with a fake clock and executes its actions on a
/// `FakeShell`, as the real shell does on evbuffers and sockets.
final class Harness {
    var machine: HTTP1ConnectionStateMachine<FakeSink>
    var actions = ActionBuffer()
    let shell = FakeShell()
    var settings: ProxySettings
    /// The fake clock, in milliseconds.
    var now: Int64 = 1_000_000

    static let upstream = UpstreamURL(scheme: .http, host: "127.0.0.1", port: 9000)

    init(
        routes: RouteTable = RouteTable(), timeouts: Timeouts = Harness.timeouts, highWater: Int = 1024,
        tools: RuleTools = RuleTools()
    ) {
        settings = ProxySettings(
            routes: routes, upstream: Self.upstream, timeouts: timeouts, highWater: highWater)
        machine = HTTP1ConnectionStateMachine(
            settings: settings, client: Array("192.0.2.1".utf8), tools: tools, now: now, actions: &actions)
        connectShell()
        execute()
    }

    /// Short, distinct timeouts.
    static var timeouts: Timeouts {
        var timeouts = Timeouts()
        timeouts.header = 1_000
        timeouts.idle = 5_000
        timeouts.upstreamConnect = 2_000
        timeouts.upstreamResponse = 3_000
        return timeouts
    }

    var sink: FakeSink { FakeSink(shell: shell) }

    // MARK: events

    func clientSends(_ text: String) {
        shell.clientInput.append(text)
        guard shell.clientReading else { return }
        clientReadable()
    }

    func clientReadable() {
        machine.clientReadable(
            input: shell.clientInput, sink: sink, levels: shell.levels, settings: settings, now: now,
            actions: &actions)
        execute()
    }

    func clientHalfCloses() {
        machine.clientEndOfInput(
            input: shell.clientInput, sink: sink, levels: shell.levels, now: now, actions: &actions)
        execute()
    }

    func clientResets() {
        machine.clientFailed(now: now, actions: &actions)
        execute()
    }

    /// The client reads what is queued; the machine hears that the output drained.
    func clientDrains() {
        shell.clientReadsAll()
        machine.clientDrained(levels: shell.levels, now: now, actions: &actions)
        execute()
    }

    func upstreamConnects() {
        shell.upstream = .connected
        machine.upstreamConnected(levels: shell.levels, now: now, actions: &actions)
        execute()
    }

    /// The upstream reads what is queued; the machine hears that its output drained.
    func upstreamDrains() {
        shell.upstreamReadsAll()
        machine.upstreamWritable(levels: shell.levels, now: now, actions: &actions)
        execute()
    }

    func upstreamSends(_ text: String) {
        shell.upstreamInput.append(text)
        guard shell.upstreamReading, shell.upstream == .connected else { return }
        machine.upstreamReadable(
            input: shell.upstreamInput, levels: shell.levels, now: now, actions: &actions)
        execute()
    }

    func upstreamFails(_ failure: UpstreamFailure) {
        machine.upstreamFailed(
            failure, input: shell.upstreamInput, levels: shell.levels, now: now, actions: &actions)
        execute()
    }

    func hashingProgressed() {
        machine.hashingProgressed(sink: sink, levels: shell.levels, now: now, actions: &actions)
        execute()
    }

    func verdict(_ id: Int, _ verdict: Verdict) {
        machine.verdict(
            id, verdict, input: shell.clientInput, sink: sink, levels: shell.levels, now: now,
            actions: &actions)
        execute()
    }

    func drain() {
        machine.drain(levels: shell.levels, now: now, actions: &actions)
        execute()
    }

    /// Moves the clock to `time`, firing due timers earliest first.
    func advance(by milliseconds: Int64) {
        let end = now + milliseconds
        while let (id, deadline) = shell.timers.filter({ $0.value <= end }).min(by: { $0.value < $1.value }) {
            shell.timers[id] = nil
            now = max(now, deadline)
            machine.timer(id, levels: shell.levels, now: now, actions: &actions)
            execute()
        }
        now = end
    }

    // MARK: executing actions

    func execute() {
        while let action = actions.next() {
            perform(action)
        }
    }

    private func perform(_ action: ProxyAction) {
        shell.note(action)
        shell.perform(action)
    }

    /// Points the shell's callbacks at this harness's machine and action buffer.
    private func connectShell() {
        shell.actionBytes = { [unowned self] range in actions.withBytes(range) { Array($0) } }
        shell.finishedRecord = { [unowned self] in actions.takeFinishedRecord() }
        shell.processClient = { [unowned self] in
            machine.clientReadable(
                input: shell.clientInput, sink: sink, levels: shell.levels, settings: settings, now: now,
                actions: &actions)
        }
        shell.processUpstream = { [unowned self] in
            machine.upstreamReadable(
                input: shell.upstreamInput, levels: shell.levels, now: now, actions: &actions)
        }
    }
}
