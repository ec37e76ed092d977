import HTTP1
import HTTPCore
import ProxyCore

/// Drives one bare `Exchange` as the HTTP/2 transport does for a stream (`ClientProtocol
/// .http2(streamID: 1)`), with a fake clock, and executes its actions on a `FakeShell`: the
/// client's input is the stream's DATA, its output the response body; heads and END_STREAM are
/// recorded apart (`streamHeads`, `streamEnds`).
final class StreamHarness {
    var exchange: Exchange<FakeSink>
    var actions = ActionBuffer()
    let shell = FakeShell()
    let tools: RuleTools
    /// The fake clock, in milliseconds.
    var now: Int64 = 1_000_000
    static let date = Array("Tue, 01 Dec 2026 18:00:00 GMT".utf8)

    /// Starts the exchange for a request whose HEADERS carried `method`, `path`, `:authority`
    /// `t` (as `Host`) and `fields`; with `endsStream` the HEADERS frame ended the stream.
    init(
        method: String = "POST", path: String = "/a", fields: [(String, String)] = [],
        endsStream: Bool = false,
        routes: RouteTable = RouteTable(), limits: Limits = Limits(), highWater: Int = 1024,
        tools: RuleTools = RuleTools()
    ) throws {
        let head = RequestHead(
            method: method, target: path, version: .http2, headers: HeaderFields([("Host", "t")] + fields))
        let framing = try MessageFraming.http2Request(head, endsStream: endsStream)
        let settings = ProxySettings(
            routes: routes, upstream: Harness.upstream, limits: limits, timeouts: Harness.timeouts,
            highWater: highWater)
        self.tools = tools
        exchange = Exchange(
            head: head, framing: framing, settings: settings, requestID: "h2-1",
            client: Array("192.0.2.1".utf8),
            secure: true, clientProtocol: .http2(streamID: 1), now: now)
        connectShell()
        exchange.start(
            input: shell.clientInput, sink: sink, levels: shell.levels, tools: tools, date: Self.date,
            now: now,
            actions: &actions)
        execute()
    }

    var sink: FakeSink { FakeSink(shell: shell) }

    /// The exchange's one log record, once it ended.
    var record: AccessRecord? { shell.records.count == 1 ? shell.records[0] : nil }

    // MARK: events

    /// DATA arrives; the exchange hears of it unless the shell stopped consuming the stream.
    func clientSends(_ bytes: some Sequence<UInt8>) {
        shell.clientInput.append(contentsOf: bytes)
        guard shell.clientReading else { return }
        clientReadable()
    }

    func clientSends(_ text: String) { clientSends(Array(text.utf8)) }

    func clientReadable() {
        exchange.clientReadable(
            input: shell.clientInput, sink: sink, levels: shell.levels, date: Self.date, now: now,
            actions: &actions)
        execute()
    }

    /// END_STREAM arrives (told whether or not the stream's DATA is being consumed).
    func clientEndsStream() {
        exchange.clientFinishedSending(
            input: shell.clientInput, sink: sink, levels: shell.levels, date: Self.date, now: now,
            actions: &actions)
        execute()
    }

    /// The client reads what is queued; the exchange hears that the stream's output drained.
    func clientDrains() {
        shell.clientReadsAll()
        exchange.clientDrained(now: now, actions: &actions)
        execute()
    }

    func upstreamConnects() {
        shell.upstream = .connected
        exchange.upstreamConnected(levels: shell.levels, now: now, actions: &actions)
        execute()
    }

    /// The upstream reads what is queued; the exchange hears that its output drained.
    func upstreamDrains() {
        shell.upstreamReadsAll()
        exchange.upstreamWritable(levels: shell.levels, now: now, actions: &actions)
        execute()
    }

    func upstreamSends(_ text: String) {
        shell.upstreamInput.append(text)
        guard shell.upstreamReading, shell.upstream == .connected else { return }
        exchange.upstreamReadable(
            input: shell.upstreamInput, levels: shell.levels, date: Self.date, now: now, actions: &actions)
        execute()
    }

    func upstreamFails(_ failure: UpstreamFailure) {
        exchange.upstreamFailed(
            failure, input: shell.upstreamInput, levels: shell.levels, date: Self.date, now: now,
            actions: &actions)
        execute()
    }

    /// The client reset the stream (or the connection went).
    func clientResets() {
        exchange.clientGone(now: now, actions: &actions)
        execute()
    }

    func verdict(_ id: Int, _ verdict: Verdict) {
        exchange.verdict(
            id, verdict, input: shell.clientInput, sink: sink, levels: shell.levels, tools: tools,
            date: Self.date,
            now: now, actions: &actions)
        execute()
    }

    /// Moves the clock on by `milliseconds`, firing due timers earliest first.
    func advance(by milliseconds: Int64) {
        let end = now + milliseconds
        while let (id, deadline) = shell.timers.filter({ $0.value <= end }).min(by: { $0.value < $1.value }) {
            shell.timers[id] = nil
            now = max(now, deadline)
            exchange.timer(id, date: Self.date, now: now, actions: &actions)
            execute()
        }
        now = end
    }

    // MARK: executing actions

    func execute() {
        while let action = actions.next() {
            shell.note(action)
            shell.perform(action)
        }
    }

    /// Points the shell's callbacks at this harness's exchange and action buffer.
    private func connectShell() {
        shell.actionBytes = { [unowned self] range in actions.withBytes(range) { Array($0) } }
        shell.finishedRecord = { [unowned self] in actions.takeFinishedRecord() }
        shell.processClient = { [unowned self] in
            exchange.clientReadable(
                input: shell.clientInput, sink: sink, levels: shell.levels, date: Self.date, now: now,
                actions: &actions)
        }
        shell.processUpstream = { [unowned self] in
            exchange.upstreamReadable(
                input: shell.upstreamInput, levels: shell.levels, date: Self.date, now: now, actions: &actions
            )
        }
    }
}

extension StreamResponseHead {
    /// The value of field `name` (any case), if present.
    func field(_ name: String) -> String? { headers[name] }

    /// The field names, in order.
    var names: [String] { headers.map(\.nameString) }
}
