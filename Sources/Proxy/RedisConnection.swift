import EventLoop
import SharedState

/// Why a Redis command got no reply FormGate can use.
enum RedisFailure: Error, Equatable {
    /// No connection (refused, down, backing off, or closed with the command pending).
    case unavailable(String)
    /// No reply within `timeout`.
    case timeout
    /// The connection spoke something that is not RESP, or a reply arrived that no command
    /// waits for: the connection is closed.
    case protocolError(String)

    /// `formgate_redis_commands_total`'s `result`.
    var result: String {
        switch self {
        case .unavailable: "unavailable"
        case .timeout: "timeout"
        case .protocolError: "protocol_error"
        }
    }

    var detail: String {
        switch self {
        case .unavailable(let why): why
        case .timeout: "no reply in time"
        case .protocolError(let why): "a reply that is not Redis's (\(why))"
        }
    }
}

/// What a Redis connection reports to its owner.
protocol RedisObserver: AnyObject {
    /// A command ended: `result` is `ok`, `error` (an error reply), or a `RedisFailure`'s.
    func redisCommand(result: String, microseconds: Int64)
    /// The connection came up (its first reply arrived) or went down.
    func redisConnection(up: Bool, detail: String)
}

/// One pipelined RESP2 connection to Redis on a worker's event loop: commands are written as
/// they come and their replies matched in order. Nothing waits: a command's completion runs
/// from the loop when its reply arrives, when its `timeout` passes, or at once when there is
/// no connection (while down, commands fail at once, so that `on_error` decides without delay).
///
/// A command that timed out stays in the queue, its completion gone, and its late reply is
/// read and dropped; when the oldest such one has waited `stallMilliseconds`, or the queue
/// holds `maxPending`, the connection is taken as stuck and closed. A reply no command waits
/// for, or bytes that are not RESP (`RESPReader`'s limits), close it too: from there no reply
/// can be matched to its command. Every close fails what is pending and reconnects after a
/// back-off (100 ms, doubling to 5 s; reset once a reply arrives).
///
/// On connecting, `AUTH` and `SELECT` (from the settings) and `setup` (e.g. `SCRIPT LOAD`) go
/// first, in the same pipeline; a refused `AUTH` closes the connection.
final class RedisConnection {
    typealias Completion = (Result<RESPValue, RedisFailure>) -> Void

    static let maxPending = 4_096
    static let initialBackoff: Int64 = 100
    static let maxBackoff: Int64 = 5_000
    /// The deadline of `AUTH`, `SELECT` and the setup commands.
    static let setupMilliseconds: Int64 = 2_000

    let settings: RedisSettings
    private unowned let base: EventBase
    private weak var observer: (any RedisObserver)?
    private let setup: [[[UInt8]]]
    private var socket: BufferedSocket?
    private var reader = RESPReader()
    private var pending: [Pending] = []
    private var head = 0
    private var up = false
    private var backoff = RedisConnection.initialBackoff
    private var reconnectTimer: Timer?
    private var deadlineTimer: Timer?
    private var deadlineArmed = false
    /// When the armed deadline timer fires, in loop milliseconds.
    private var armedAt: Int64 = 0
    /// Set by `shutdown()`: no reconnecting.
    private var closed = false
    /// Commands failed at once, completed on the next pass of the loop.
    private var immediate: [(Completion, RedisFailure)] = []
    private var deferred: DeferredCall?

    private struct Pending {
        var completion: Completion?
        let started: Int64
        /// When it was written, in microseconds (its latency).
        let sentMicroseconds: Int64
        let deadline: Int64
        /// AUTH/SELECT/setup: a failure closes the connection.
        let isSetup: Bool
    }

    /// How long a timed-out command's reply may be late before the connection is taken as stuck.
    var stallMilliseconds: Int64 { max(1_000, settings.timeoutMilliseconds * 10) }

    init(settings: RedisSettings, base: EventBase, observer: any RedisObserver, setup: [[[UInt8]]]) {
        self.settings = settings
        self.base = base
        self.observer = observer
        self.setup = setup
        connect()
    }

    deinit {
        closed = true
        reconnectTimer?.cancel()
        deadlineTimer?.cancel()
        deferred?.cancel()
        socket?.close()
    }

    /// Whether the connection is up (its first reply arrived, none failed since).
    var isUp: Bool { up }

    /// Sends `command`; `completion` runs once, from the loop (never from inside `send`).
    func send(_ command: [[UInt8]], _ completion: @escaping Completion) {
        guard let socket, !closed else {
            return failLater(completion, .unavailable("redis is down; reconnecting"))
        }
        guard pending.count - head < Self.maxPending else {
            return failLater(completion, .unavailable("too many redis commands pending"))
        }
        write(command, completion: completion, isSetup: false, to: socket)
    }

    /// A reply did not answer its command (another command's, by its nonce): nothing more on
    /// this connection can be trusted; it closes and reconnects.
    func desynchronized() {
        guard socket != nil, !closed else { return }
        fail(.protocolError("a reply to another command"), reconnect: true)
    }

    /// Fails `completion` on this loop iteration, after the caller returned.
    private func failLater(_ completion: @escaping Completion, _ failure: RedisFailure) {
        immediate.append((completion, failure))
        if deferred == nil {
            deferred = DeferredCall(base: base) { [weak self] in self?.runImmediate() }
        }
        deferred?.schedule()
    }

    private func runImmediate() {
        let failed = immediate
        immediate = []
        for (completion, failure) in failed {
            observer?.redisCommand(result: failure.result, microseconds: 0)
            completion(.failure(failure))
        }
    }

    /// Closes the connection for good (the worker stops, or the settings changed).
    func shutdown() {
        closed = true
        reconnectTimer?.cancel()
        fail(.unavailable("the connection closed"), reconnect: false)
    }

    private func write(
        _ command: [[UInt8]], completion: Completion?, isSetup: Bool, to socket: BufferedSocket
    ) {
        var sink = socket.output
        RESPCommand.write(command, into: &sink)
        let micro = monotonicMicroseconds()
        let now = micro / 1_000
        // The connection's own commands are not on a request's path: they may take longer.
        let timeout =
            isSetup ? max(settings.timeoutMilliseconds, Self.setupMilliseconds) : settings.timeoutMilliseconds
        pending.append(
            Pending(
                completion: completion, started: now, sentMicroseconds: micro, deadline: now + timeout,
                isSetup: isSetup))
        armDeadline()
    }

    private func connect() {
        guard !closed else { return }
        reader = RESPReader()
        do throws(EventLoopError) {
            let delegate = RedisSocketDelegate(self)
            let socket: BufferedSocket
            switch settings.address {
            case .unix(let path):
                socket = try BufferedSocket.connect(
                    base: base, address: try SocketAddress(unixPath: path), delegate: delegate)
            case .tcp(let host, let port):
                socket = try BufferedSocket.connect(
                    base: base, host: host, port: port, tls: nil, delegate: delegate)
            }
            socket.setWatermarks(readHigh: 1 << 20, writeLow: 0)
            self.socket = socket
            if let password = settings.password {
                var auth: [[UInt8]] = [Array("AUTH".utf8)]
                if let username = settings.username { auth.append(Array(username.utf8)) }
                auth.append(Array(password.utf8))
                write(auth, completion: nil, isSetup: true, to: socket)
            }
            if settings.database != 0 {
                write(
                    [Array("SELECT".utf8), Array(String(settings.database).utf8)], completion: nil,
                    isSetup: true, to: socket)
            }
            for command in setup { write(command, completion: nil, isSetup: true, to: socket) }
        } catch {
            socket = nil
            scheduleReconnect(detail: "cannot connect to \(settings.displayAddress): \(error.message)")
        }
    }

    fileprivate func socket(_ socket: BufferedSocket, events: SocketEvents) {
        guard socket === self.socket else { return }
        if events.contains(.connected) {
            socket.setNoDelay()
            socket.enable()
            return
        }
        let detail =
            events.contains(.endOfFile) && !events.contains(.error)
            ? "redis at \(settings.displayAddress) closed the connection"
            : up
                ? "the connection to redis at \(settings.displayAddress) broke"
                : "cannot connect to redis at \(settings.displayAddress)"
        fail(.unavailable(detail), reconnect: true)
    }

    fileprivate func socketReadable(_ socket: BufferedSocket) {
        guard socket === self.socket else { return }
        let input = socket.input
        input.forEachChunk { chunk in
            reader.take(chunk)
            return true
        }
        input.drain(input.count)
        while self.socket === socket {
            let value: RESPValue
            do throws(RESPError) {
                guard let next = try reader.next() else { return }
                value = next
            } catch {
                return fail(.protocolError(error.description), reconnect: true)
            }
            guard head < pending.count else {
                return fail(.protocolError("a reply no command waits for"), reconnect: true)
            }
            let entry = pending[head]
            head += 1
            compact()
            if entry.isSetup, case .error(let message) = value {
                let word = message.prefix { $0 != " " }
                return fail(.unavailable("redis refused the connection's \(word) setup"), reconnect: true)
            }
            if !up, !entry.isSetup || head == pending.count {
                up = true
                backoff = Self.initialBackoff
                observer?.redisConnection(
                    up: true, detail: "connected to redis at \(settings.displayAddress)")
            }
            guard let completion = entry.completion else { continue }
            let result: String
            if case .error = value { result = "error" } else { result = "ok" }
            observer?.redisCommand(
                result: result, microseconds: monotonicMicroseconds() - entry.sentMicroseconds)
            completion(.success(value))
        }
    }

    /// A deadline passed: every command past its own fails; an unanswered setup command, or a
    /// connection whose oldest unanswered command is `stallMilliseconds` old, closes it.
    private func deadlinePassed() {
        deadlineArmed = false
        let now = monotonicMilliseconds()
        if head < pending.count, now - pending[head].started >= stallMilliseconds {
            return fail(.timeout, reconnect: true)
        }
        var index = head
        while index < pending.count {
            let entry = pending[index]
            if entry.isSetup, entry.deadline <= now { return fail(.timeout, reconnect: true) }
            if !entry.isSetup, let completion = entry.completion {
                // Commands are queued in order with one timeout: the rest are due later.
                guard entry.deadline <= now else { break }
                pending[index].completion = nil
                observer?.redisCommand(result: "timeout", microseconds: (now - entry.started) * 1_000)
                completion(.failure(.timeout))
                guard !closed, socket != nil, index < pending.count else { return }
            }
            index += 1
        }
        armDeadline()
    }

    /// Arms the timer for the earliest of: an unanswered setup command's deadline, the first
    /// command still waited for, the oldest command's stall.
    private func armDeadline() {
        guard head < pending.count else { return }
        var due = pending[head].started + stallMilliseconds
        var index = head
        while index < pending.count {
            let entry = pending[index]
            if entry.isSetup {
                due = min(due, entry.deadline)
            } else if entry.completion != nil {
                due = min(due, entry.deadline)
                break
            }
            index += 1
        }
        if deadlineArmed, armedAt <= due { return }
        if deadlineTimer == nil {
            deadlineTimer = Timer(base: base) { [weak self] in self?.deadlinePassed() }
        }
        deadlineArmed = true
        armedAt = due
        deadlineTimer?.schedule(milliseconds: max(1, due - monotonicMilliseconds()))
    }

    /// Closes the socket and fails every pending command; reconnects after the back-off.
    private func fail(_ failure: RedisFailure, reconnect: Bool) {
        let failed = pending[head...].compactMap(\.completion)
        pending = []
        head = 0
        socket?.close()
        socket = nil
        deadlineTimer?.cancel()
        deadlineArmed = false
        if reconnect { scheduleReconnect(detail: failure.detail) }
        for completion in failed {
            observer?.redisCommand(result: failure.result, microseconds: 0)
            completion(.failure(failure))
        }
    }

    private func scheduleReconnect(detail: String) {
        up = false
        observer?.redisConnection(up: false, detail: detail)
        guard !closed else { return }
        if reconnectTimer == nil {
            reconnectTimer = Timer(base: base) { [weak self] in self?.connect() }
        }
        reconnectTimer?.schedule(milliseconds: backoff)
        backoff = min(Self.maxBackoff, backoff * 2)
    }

    private func compact() {
        if head == pending.count {
            pending.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64, head * 2 > pending.count {
            pending.removeFirst(head)
            head = 0
        }
    }
}

/// The connection's socket delegate (the connection owns the socket; the socket does not own
/// the connection).
private final class RedisSocketDelegate: BufferedSocketDelegate {
    private weak var connection: RedisConnection?

    init(_ connection: RedisConnection) { self.connection = connection }

    func socketReadable(_ socket: BufferedSocket) { connection?.socketReadable(socket) }
    func socketWritable(_ socket: BufferedSocket) {}
    func socket(_ socket: BufferedSocket, events: SocketEvents) { connection?.socket(socket, events: events) }
}
