import Config
import EventLoop
import HTTP2
import HTTPCore
import ProxyCore
import Synchronization
import UploadRules

#if canImport(Glibc)
    import Glibc
#endif

/// What a worker listens on: an address and, for a TLS listener, the context it accepts with.
struct ListenerBinding {
    var address: SocketAddress
    var tls: TLSListenerContext?
    /// The HTTP/2 settings when the listener serves HTTP/2 (ALPN `h2`, or h2c).
    var http2: ListenerConfig.HTTP2Settings?
}

/// One event loop on its own thread: one listener per configured address (SO_REUSEPORT), the
/// client connections it accepted (TLS ones once their handshake is done), and an upstream
/// connection pool. Nothing here is shared with other workers but the TLS contexts.
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
        didSet { settings = withLocalRoutes(Self.settings(config, tracing: tracer != nil)) }
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
    /// Wakes the loop when hashing or spool writing progresses (from a hashing thread or the
    /// spool writer), or a tus store job or delivery is done.
    private(set) var progressNotifier: Notifier?
    /// The tus stores, shared by every worker.
    let tusServices: TusServices
    /// The identities of this worker's tus deliveries under way.
    let deliveryTickets = DeliveryTickets()
    /// Writes this loop's spools on its own thread (`fg-spool-N`); set at the end of `init`
    /// (its signal is the notifier, which needs the worker).
    private(set) var spoolWriter: SpoolWriter!
    private var listeners: [Listener] = []
    private(set) var clients: [ObjectIdentifier: any ServedConnection] = [:]
    /// Plain h2c connections whose first bytes are awaited (they count against `maxConnections`).
    private var sniffers: [ObjectIdentifier: PrefaceSniffer] = [:]
    /// TLS connections whose handshake is under way (they count against `maxConnections`).
    private var handshakes: [ObjectIdentifier: TLSHandshake] = [:]
    private let maxConnections: Int
    private var acceptErrors = AcceptErrorTally(pause: Listener.errorPauseMilliseconds)
    /// Writes the accept failures counted since the last line, once its interval is over.
    private var acceptErrorReport: Timer?
    /// The first worker's look for expired tus uploads (`expireUploads`).
    private var expiryTimer: Timer?
    /// The span exporter's side (`tracing:`), if configured at start.
    let tracer: Tracer?
    /// This worker's uploads for the admin's live view (`Worker+Live`).
    let live = LiveBoard(capacity: Worker.liveCapacity)
    /// Refreshes `live` (`publishLive`).
    private var livePublisher: Timer?
    /// The worker's side of the shared rate limits (its Redis connections), with `redis:`.
    private(set) var sharedLimits: SharedLimits?
    private let index: Int

    /// - Parameters:
    ///   - digestPool: the hashing threads every worker shares; without them, large parts are
    ///     hashed on the loop.
    ///   - index: the worker's number, in its spool writer's thread name.
    ///   - spoolGate: a test hook the spool writer calls before its first write.
    init(
        config: ServerConfig, workers: Int, log: AccessLog, metrics: Metrics, listeners: [ListenerBinding],
        digestPool: DigestPool? = nil, index: Int = 0, spoolGate: (@Sendable () -> Void)? = nil,
        tusServices: TusServices = TusServices(threadsPerStore: 1), tracer: Tracer? = nil
    ) throws(EventLoopError) {
        self.tracer = tracer
        base = try EventBase()
        self.tusServices = tusServices
        self.index = index
        self.config = config
        self.settings = Self.settings(config, tracing: tracer != nil)
        self.log = log
        self.metrics = metrics
        pool = UpstreamPool(base: base, caFile: config.upstreamCAFile, idleTimeout: config.timeouts.idle)
        maxConnections = max(1, config.limits.connections / workers)
        for binding in listeners {
            self.listeners.append(
                try Listener(
                    base: base, address: binding.address, reusePort: true,
                    onAcceptError: { [unowned self] error in self.acceptFailed(errno: error) },
                    onAccept: { [unowned self] fd, peer in self.accept(fd, peer, binding) }))
        }
        notifier = Notifier(base: base) { [unowned self] in self.runCommands() }
        acceptErrorReport = Timer(base: base) { [unowned self] in self.reportAcceptErrors() }
        let notifier = Notifier(base: base) { [unowned self] in self.backgroundProgressed() }
        progressNotifier = notifier
        spoolWriter = SpoolWriter(name: "fg-spool-\(index)", beforeFirstBlock: spoolGate) { [notifier] in
            notifier.notify()
        }
        if let digestPool {
            ruleTools.hashing = DigestQueue(pool: digestPool) { [notifier] in notifier.notify() }
        }
        ruleTools.inspectors = Scanners(worker: self)
        settings = withLocalRoutes(settings)
        if let redis = config.redis {
            sharedLimits = SharedLimits(settings: redis, worker: self, index: index)
        }
        let publisher = Timer(base: base, repeating: true) { [unowned self] in self.publishLive() }
        publisher.schedule(milliseconds: Self.livePublishInterval)
        livePublisher = publisher
        if index == 0 {
            let timer = Timer(base: base, repeating: true) { [unowned self] in self.expireUploads() }
            timer.schedule(milliseconds: Self.expiryInterval)
            expiryTimer = timer
        }
    }

    /// A hashing thread or the spool writer reported progress: every connection looks at its
    /// held output, paused reads and pending spool flushes (`hashingProgressed`).
    private func backgroundProgressed() {
        ruleTools.hashing?.releaseHashed()
        for client in Array(clients.values) {
            client.hashingProgressed()
            client.localProgressed()
        }
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
                if newConfig.redis != sharedLimits?.settings {
                    sharedLimits?.shutdown()
                    sharedLimits = newConfig.redis.map {
                        SharedLimits(settings: $0, worker: self, index: index)
                    }
                }
            case .drain:
                draining = true
                for listener in listeners { listener.disable() }
                listeners.removeAll()
                pool.closeAll()
                for handshake in Array(handshakes.values) { handshake.abandon() }
                for sniffer in Array(sniffers.values) { sniffer.abandon() }
                for client in Array(clients.values) { client.drain() }
                stopIfDrained()
            }
        }
    }

    private func stopIfDrained() {
        if draining, clients.isEmpty, handshakes.isEmpty, sniffers.isEmpty { base.stop() }
    }

    /// The addresses the listeners are bound to, in configuration order.
    var addresses: [SocketAddress?] { listeners.map(\.boundAddress) }

    /// Open connections, handshaking ones included.
    private var connectionCount: Int { clients.count + handshakes.count + sniffers.count }

    /// A TLS listener's connection waits for its handshake (reading the listener's current
    /// context once); a plain one starts serving.
    private func accept(_ fd: Int32, _ peer: SocketAddress, _ binding: ListenerBinding) {
        if let tls = binding.tls {
            guard let socket = try? BufferedSocket.accepted(base: base, fd: fd, tls: tls.current) else {
                return
            }
            let handshake = TLSHandshake(
                socket: socket, peer: peer, http2: binding.http2, worker: self,
                timeoutMilliseconds: config.timeouts.tlsHandshake)
            handshakes[ObjectIdentifier(handshake)] = handshake
        } else {
            guard let socket = try? BufferedSocket.accepted(base: base, fd: fd) else { return }
            if let http2 = binding.http2 {
                let sniffer = PrefaceSniffer(socket: socket, peer: peer, settings: http2, worker: self)
                sniffers[ObjectIdentifier(sniffer)] = sniffer
            } else {
                serve(socket, peer: peer, secure: false, http2: nil)
            }
        }
        if connectionCount >= maxConnections { for listener in listeners { listener.disable() } }
    }

    /// Serves HTTP/1.1 on `socket`, or HTTP/2 with `http2`'s settings.
    private func serve(
        _ socket: BufferedSocket, peer: SocketAddress, secure: Bool, http2: ListenerConfig.HTTP2Settings?
    ) {
        let client: any ServedConnection
        if let http2 {
            do throws(HTTP2Error) {
                client = try HTTP2Connection(
                    socket: socket, peer: peer, secure: secure, settings: http2, worker: self)
            } catch {
                ErrorLog.shared.write(.error, "cannot start an HTTP/2 session: \(error)")
                socket.close()
                return connectionEnded()
            }
        } else {
            client = ClientConnection(socket: socket, peer: peer, secure: secure, worker: self)
        }
        clients[ObjectIdentifier(client)] = client
        metrics.update { $0.activeConnections += 1 }
    }

    /// A TLS handshake is done: the connection serves HTTP/2 when ALPN chose `h2`, else HTTP/1.1.
    func handshakeFinished(_ handshake: TLSHandshake) {
        guard handshakes.removeValue(forKey: ObjectIdentifier(handshake)) != nil else { return }
        let http2 = handshake.socket.applicationProtocol == "h2" ? handshake.http2 : nil
        serve(handshake.socket, peer: handshake.peer, secure: true, http2: http2)
    }

    /// A plain h2c listener's connection spoke: HTTP/2 (`true`), HTTP/1.1 (`false`), or it
    /// closed or stayed silent (`nil`).
    func sniffed(_ sniffer: PrefaceSniffer, http2: Bool?) {
        guard sniffers.removeValue(forKey: ObjectIdentifier(sniffer)) != nil else { return }
        guard let http2 else {
            sniffer.socket.close()
            return connectionEnded()
        }
        serve(sniffer.socket, peer: sniffer.peer, secure: false, http2: http2 ? sniffer.settings : nil)
    }

    /// A TLS handshake failed or timed out (counted under `reason`), or was abandoned (`nil`);
    /// its socket is closed.
    func handshakeFailed(_ handshake: TLSHandshake, reason: String?) {
        guard handshakes.removeValue(forKey: ObjectIdentifier(handshake)) != nil else { return }
        if let reason { metrics.update { $0.tlsHandshakeFailures[reason, default: 0] += 1 } }
        connectionEnded()
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

    func closed(_ client: any ServedConnection) {
        guard clients.removeValue(forKey: ObjectIdentifier(client)) != nil else { return }
        metrics.update { $0.activeConnections -= 1 }
        connectionEnded()
    }

    /// Serves an internal connection (a tus delivery's) like an accepted one.
    func adopt(_ client: any ServedConnection) {
        clients[ObjectIdentifier(client)] = client
        metrics.update { $0.activeConnections += 1 }
    }

    private func connectionEnded() {
        if connectionCount < maxConnections { for listener in listeners { listener.enable() } }
        stopIfDrained()
    }

    /// The run-time settings of a configuration.
    static func settings(_ config: ServerConfig, tracing: Bool) -> ProxySettings {
        ProxySettings(
            routes: config.routes, upstream: config.upstream, limits: config.limits,
            timeouts: config.timeouts,
            underscoresInHeaders: config.underscoresInHeaders,
            tracing: tracing ? config.tracing?.sampler : nil)
    }

    /// A request started (for the in-flight gauge).
    func exchangeStarted() {
        metrics.update { $0.uploadsInFlight += 1 }
    }

    /// A request ended: its access-log line and its metrics, exactly once.
    func log(_ record: AccessRecord, client: SocketAddress) {
        log.write(record, client: client)
        if record.trace != nil { tracer?.export(record, client: client, now: base.nowMilliseconds) }
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
        entry.http2 = record.clientProtocol.isHTTP2
        if let multipart = record.multipart {
            entry.parts = multipart.parts.count
            entry.files = multipart.files
            entry.injected = multipart.injected.count
            entry.anomalies = multipart.anomalies
            for part in multipart.parts {
                if part.renamed { entry.renamed += 1 }
                if let scan = part.scan { entry.scans.count(scan) }
                // Appending an empty array still made room for it: one allocation per part.
                if !part.stripped.isEmpty { entry.stripped += part.stripped }
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
        for handshake in Array(handshakes.values) { handshake.abandon() }
        for sniffer in Array(sniffers.values) { sniffer.abandon() }
        for client in clients.values { client.close() }
        // The spools the connections dropped are closed by the writer; then it ends.
        spoolWriter.finish()
    }

    func stop() {
        base.stop()
    }
}
