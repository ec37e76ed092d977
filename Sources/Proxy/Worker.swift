public import Config
public import EventLoop
import HTTPCore
import ProxyCore
import Synchronization
public import UploadRules

#if canImport(Glibc)
    import Glibc
#endif

/// One event loop on its own thread: a listener (SO_REUSEPORT), the client connections it
/// accepted, and an upstream connection pool. Nothing here is shared with other workers.
final class Worker {
    /// Instructions from the main thread, run on the loop thread.
    enum Command: Sendable {
        /// New requests use this configuration; requests in flight keep theirs.
        case reload(ServerConfig)
        /// Stop accepting, finish what is in flight, then stop the loop.
        case drain
    }

    let base: EventBase
    /// The configuration new requests start with (loop thread only).
    private(set) var config: ServerConfig {
        didSet { settings = Self.settings(config) }
    }
    /// `config` as the state machines read it.
    private(set) var settings: ProxySettings
    /// Whether the worker is draining: connections close after their current exchange.
    private(set) var draining = false
    private let commands = Mutex<[Command]>([])
    private var notifier: Notifier?
    let pool: UpstreamPool
    let log: AccessLog
    let metrics: Metrics
    /// The rules' per-thread tools: a sniffer (libmagic is not thread-safe) and this loop's
    /// share of the hashing threads, if the server has them.
    private(set) var ruleTools = RuleTools(sniffer: Sniffer())
    /// Wakes the loop when hashing progresses (from a hashing thread).
    private var hashingNotifier: Notifier?
    private var listener: Listener?
    private var clients: [ObjectIdentifier: ClientConnection] = [:]
    private let maxConnections: Int
    private var acceptErrors = AcceptErrorTally(pause: Listener.errorPauseMilliseconds)
    /// Writes the accept failures counted since the last line, once its interval is over.
    private var acceptErrorReport: Timer?

    /// - Parameter digestPool: the hashing threads every worker shares; without them, large
    ///   parts are hashed on the loop.
    init(
        config: ServerConfig, workers: Int, log: AccessLog, metrics: Metrics, address: SocketAddress,
        digestPool: DigestPool? = nil
    ) throws(EventLoopError) {
        base = try EventBase()
        self.config = config
        self.settings = Self.settings(config)
        self.log = log
        self.metrics = metrics
        pool = UpstreamPool(base: base, caFile: config.upstreamCAFile, idleTimeout: config.timeouts.idle)
        maxConnections = max(1, config.limits.connections / workers)
        listener = try Listener(
            base: base, address: address, reusePort: true,
            onAcceptError: { [unowned self] error in self.acceptFailed(errno: error) },
            onAccept: { [unowned self] fd, peer in self.accept(fd, peer) })
        notifier = Notifier(base: base) { [unowned self] in self.runCommands() }
        acceptErrorReport = Timer(base: base) { [unowned self] in self.reportAcceptErrors() }
        if let digestPool {
            let notifier = Notifier(base: base) { [unowned self] in self.hashingProgressed() }
            hashingNotifier = notifier
            ruleTools.hashing = DigestQueue(pool: digestPool) { [notifier] in notifier.notify() }
        }
    }

    /// A hashing thread reported progress: every connection looks at its held output.
    private func hashingProgressed() {
        for client in Array(clients.values) { client.hashingProgressed() }
    }

    /// Queues a command for the loop thread (callable from any thread).
    func send(_ command: Command) {
        commands.withLock { $0.append(command) }
        notifier?.notify()
    }

    private func runCommands() {
        let pending = commands.withLock { queue in
            defer { queue.removeAll() }
            return queue
        }
        for command in pending {
            switch command {
            case .reload(let newConfig):
                config = newConfig
            case .drain:
                draining = true
                listener?.disable()
                listener = nil
                pool.closeAll()
                for client in Array(clients.values) { client.drain() }
                stopIfDrained()
            }
        }
    }

    private func stopIfDrained() {
        if draining, clients.isEmpty { base.stop() }
    }

    /// The address the listener is bound to.
    var address: SocketAddress? { listener?.boundAddress }

    private func accept(_ fd: Int32, _ peer: SocketAddress) {
        guard let socket = try? BufferedSocket.accepted(base: base, fd: fd) else { return }
        let client = ClientConnection(socket: socket, peer: peer, worker: self)
        clients[ObjectIdentifier(client)] = client
        metrics.update { $0.activeConnections += 1 }
        if clients.count >= maxConnections { listener?.disable() }
    }

    /// `accept()` failed (the listener already paused): counted, and logged at most once per
    /// interval.
    private func acceptFailed(errno error: Int32) {
        let reason = AcceptErrorTally.Reason(errno: error)
        metrics.update { $0.acceptErrors[reason.rawValue, default: 0] += 1 }
        let now = base.nowMilliseconds
        if let line = acceptErrors.failed(errno: error, now: now) {
            logAcceptErrors(line)
        } else if let due = acceptErrors.reportDue {
            // The deadline is fixed (an interval after the last line): re-arming keeps it.
            acceptErrorReport?.schedule(milliseconds: max(1, due - now))
        }
    }

    private func reportAcceptErrors() {
        if let line = acceptErrors.report(now: base.nowMilliseconds) { logAcceptErrors(line) }
    }

    private func logAcceptErrors(_ line: String) {
        ErrorLog.shared.write(.warn, line + " (\(clients.count) client connections open in this worker)")
    }

    func closed(_ client: ClientConnection) {
        guard clients.removeValue(forKey: ObjectIdentifier(client)) != nil else { return }
        metrics.update { $0.activeConnections -= 1 }
        if clients.count < maxConnections { listener?.enable() }
        stopIfDrained()
    }

    /// The run-time settings of a configuration.
    static func settings(_ config: ServerConfig) -> ProxySettings {
        ProxySettings(
            routes: config.routes, upstream: config.upstream, limits: config.limits,
            timeouts: config.timeouts,
            underscoresInHeaders: config.underscoresInHeaders)
    }

    /// A request started (for the in-flight gauge).
    func exchangeStarted() {
        metrics.update { $0.uploadsInFlight += 1 }
    }

    /// A request ended: its access-log line and its metrics, exactly once.
    func log(_ record: AccessRecord, client: SocketAddress) {
        log.write(record, client: client)
        guard record.requestID != nil else {
            return metrics.update { state in
                state.requests[Metrics.RequestKey(route: "none", status: record.status), default: 0] += 1
                if let limit = record.failure?.limit { state.limitRejections[limit, default: 0] += 1 }
            }
        }
        metrics.requestEnded(Self.metricsRecord(record))
    }

    /// What one finished exchange adds to the metrics (counted under one lock, no key string).
    private static func metricsRecord(_ record: AccessRecord) -> Metrics.RequestRecord {
        var entry = Metrics.RequestRecord(
            route: record.route ?? "none", status: record.status, bytesIn: record.bytesIn,
            bytesOut: record.bytesOut, seconds: Double(record.finishedAt - record.startedAt) / 1000,
            upstreamSeconds: record.upstreamMilliseconds.map { Double($0) / 1000 })
        if let multipart = record.multipart {
            entry.parts = multipart.parts.count
            entry.files = multipart.files
            entry.injected = multipart.injected.count
            entry.anomalies = multipart.anomalies
            for part in multipart.parts {
                if part.renamed { entry.renamed += 1 }
                if part.dropped { entry.dropped += 1 }
                if part.sniffedType != nil, part.contentType == part.sniffedType,
                    part.declaredType != part.sniffedType
                {
                    entry.sniffOverrides += 1
                }
            }
        }
        entry.tallies = record.tallies
        let failure = record.failure
        entry.typeRejected = failure?.kind == .unsupportedMediaType
        entry.limit = failure?.limit
        switch failure?.kind {
        case .upstreamUnreachable?: entry.upstreamError = "unreachable"
        case .upstreamTimeout?: entry.upstreamError = "timeout"
        case .upstreamBroken?: entry.upstreamError = "broken"
        default: break
        }
        return entry
    }

    /// Runs the loop on the calling thread until `stop()`.
    func run() {
        base.run()
        pool.closeAll()
        for client in clients.values { client.close() }
    }

    func stop() {
        base.stop()
    }
}

/// The running proxy: one `Worker` per configured event loop, each on its own thread.
public final class ProxyServer: @unchecked Sendable {
    private var workers: [Worker] = []
    private var threads: [EventLoopThread] = []
    let config: ServerConfig
    /// Counters for `/metrics`.
    let metrics: Metrics
    private let accessLog: AccessLog

    /// Binds every worker's listener (so errors surface before serving).
    ///
    /// - Parameter digestPool: the hashing threads every worker's digests share (each worker
    ///   queues into them and hears of progress through its notifier); without a pool, digests
    ///   are computed on the loop threads.
    public init(config: ServerConfig, digestPool: DigestPool? = nil) throws(EventLoopError) {
        EventLoopFailures.setReporter { ErrorLog.shared.write(.warn, $0) }
        self.config = config
        let count = config.effectiveWorkers
        let log = AccessLog(destination: config.accessLog)
        accessLog = log
        let metrics = Metrics()
        metrics.droppedLogLines = { log.writer.dropped }
        self.metrics = metrics
        var address = try SocketAddress(parsing: config.listen)
        try Listener.checkAvailable(address)
        for _ in 0..<count {
            let worker = try Worker(
                config: config, workers: count, log: log, metrics: metrics, address: address,
                digestPool: digestPool)
            // With port 0 the first listener picks a port; the others join it (SO_REUSEPORT).
            if let bound = worker.address { address = bound }
            workers.append(worker)
        }
        if let adminListen = config.admin {
            admin = try AdminServer(
                address: try SocketAddress(parsing: adminListen), metrics: metrics, upstream: config.upstream)
        }
    }

    /// The address clients connect to.
    public var address: SocketAddress? { workers.first?.address }

    private var admin: AdminServer?
    private var adminThread: EventLoopThread?

    /// The admin listener's address, when `admin:` is set.
    public var adminAddress: SocketAddress? { admin?.address }

    /// Starts each worker's loop on its own thread (`formgate-w0`, …) and the admin
    /// listener's (`formgate-admin`).
    ///
    /// - Throws: `EventLoopError` when a thread cannot be started; the loops already started
    ///   keep running (`stop()` ends them).
    public func start() throws(EventLoopError) {
        if let admin {
            adminThread = try EventLoopThread.start(name: "formgate-admin") { admin.base.run() }
        }
        for (index, worker) in workers.enumerated() {
            let handoff = WorkerHandoff(worker: worker)
            let thread = try EventLoopThread.start(name: "formgate-w\(index)") { [self] in
                handoff.worker.run()
                workerFinished()
            }
            threads.append(thread)
        }
    }

    /// Stops every loop and waits for the threads.
    public func stop() {
        for worker in workers { worker.stop() }
        for thread in threads { thread.join() }
        threads.removeAll()
    }

    /// New requests use `config`; requests in flight finish with the one they started with.
    /// (The listen address and worker count are not changed by a reload.)
    public func reload(_ config: ServerConfig) {
        for worker in workers { worker.send(.reload(config)) }
        admin?.upstream.withLock { $0 = config.upstream }
        metrics.update { $0.reloads += 1 }
    }

    /// Reopens the access log file (SIGUSR1, after logrotate moved it).
    public func reopenLogs() {
        accessLog.writer.reopen()
    }

    /// Writes the access log lines still queued (before exiting).
    public func flushLogs() {
        accessLog.writer.flushAndStop()
    }

    /// Counts a refused reload (the running configuration stays).
    public func reloadRefused() {
        metrics.update { $0.reloadFailures += 1 }
    }

    /// Stops accepting, lets requests in flight finish, and returns when every worker is idle
    /// or `milliseconds` have passed; returns whether all finished.
    public func drain(milliseconds: Int64) -> Bool {
        running.withLock { $0 = workers.count }
        for worker in workers { worker.send(.drain) }
        let deadline = monotonicMilliseconds() + milliseconds
        while running.withLock({ $0 }) > 0 {
            if monotonicMilliseconds() > deadline { return false }
            usleep(20_000)
        }
        for thread in threads { thread.join() }
        threads.removeAll()
        return true
    }

    private let running = Mutex(0)

    fileprivate func workerFinished() {
        running.withLock { $0 -= 1 }
    }
}

/// Hands a worker to the thread that runs its loop. Other threads reach the worker only
/// through `send(_:)` and `stop()`, which are safe from any thread.
private struct WorkerHandoff: @unchecked Sendable {
    let worker: Worker
}

func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}
