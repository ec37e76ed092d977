public import Config
public import EventLoop
import HTTP2
import HTTPCore
import ProxyCore
import Resumable
import Synchronization
import Tracing
public import UploadRules

#if canImport(Glibc)
    import Glibc
#endif

/// The running proxy: one `Worker` per configured event loop, each on its own thread.
public final class ProxyServer: @unchecked Sendable {
    private var workers: [Worker] = []
    private var threads: [EventLoopThread] = []
    let config: ServerConfig
    /// Counters for `/metrics`.
    let metrics: Metrics
    private let accessLog: AccessLog
    /// The tus stores every worker shares.
    private let tusServices: TusServices
    /// The span exporter, when `tracing:` was configured at start.
    private let tracer: Tracer?

    /// Loads the TLS listeners' certificates and binds every worker's listeners (so errors
    /// surface before serving).
    ///
    /// - Parameters:
    ///   - digestPool: the hashing threads every worker's digests share (each worker queues
    ///     into them and hears of progress through its notifier); without a pool, digests are
    ///     computed on the loop threads.
    ///   - spoolGate: a test hook each worker's spool writer calls before its first write (it
    ///     may block that thread; `FORMGATE_TEST_SPOOL_GATE` in the README).
    ///   - version: FormGate's version (the spans' resource and scope).
    public init(
        config: ServerConfig, digestPool: DigestPool? = nil, spoolGate: (@Sendable () -> Void)? = nil,
        version: String = "0.1.0"
    ) throws(EventLoopError) {
        EventLoopFailures.setReporter { ErrorLog.shared.write(.warn, $0) }
        self.config = config
        let count = config.effectiveWorkers
        let log = AccessLog(destination: config.accessLog)
        accessLog = log
        let metrics = Metrics()
        metrics.droppedLogLines = { log.writer.dropped }
        self.metrics = metrics
        if let tracing = config.tracing {
            do throws(TracingError) {
                tracer = Tracer(exporter: try SpanExporter(settings: tracing, version: version))
            } catch {
                throw EventLoopError("tracing: \(error)")
            }
        } else {
            tracer = nil
        }
        let tracer = tracer
        metrics.traceCounters = { tracer?.exporter.counters }
        tusServices = TusServices(threadsPerStore: 2)
        for route in config.routes {
            guard let tus = route.tus else { continue }
            do throws(StoreError) {
                _ = try tusServices.service(tus, redis: config.redis)
            } catch {
                throw EventLoopError("route \(route.name): tus store \(tus.store): \(error)")
            }
        }
        var bindings: [ListenerBinding] = []
        for listener in config.listeners {
            let address = try SocketAddress(parsing: listener.address)
            try Listener.checkAvailable(address)
            let tls = try listener.tls.map { settings throws(EventLoopError) in
                try TLSListenerContext(
                    address: listener.address, settings: settings, http2: listener.servesHTTP2)
            }
            bindings.append(
                ListenerBinding(
                    address: address, tls: tls, http2: listener.servesHTTP2 ? listener.http2 : nil))
        }
        tlsContexts = bindings.compactMap(\.tls)
        secureListeners = bindings.map { $0.tls != nil }
        for index in 0..<count {
            let worker = try Worker(
                config: config, workers: count, log: log, metrics: metrics, listeners: bindings,
                digestPool: digestPool, index: index, spoolGate: spoolGate, tusServices: tusServices,
                tracer: tracer)
            // With port 0 the first worker's listeners pick ports; the others join them
            // (SO_REUSEPORT).
            for (index, bound) in worker.addresses.enumerated() {
                if let bound { bindings[index].address = bound }
            }
            workers.append(worker)
        }
        if let adminListen = config.admin {
            admin = try AdminServer(
                address: try SocketAddress(parsing: adminListen), metrics: metrics, upstream: config.upstream,
                access: AdminServer.Access(config), boards: workers.map(\.live))
        }
    }

    /// The TLS listeners' contexts, replaced by `reloadCertificates(_:)`.
    private var tlsContexts: [TLSListenerContext] = []
    /// Which listeners run TLS, in configuration order.
    private var secureListeners: [Bool] = []

    /// The first listener's address.
    public var address: SocketAddress? { addresses.first?.address }

    /// Every listener's bound address, in configuration order, and whether it runs TLS.
    public var addresses: [(address: SocketAddress, tls: Bool)] {
        guard let worker = workers.first else { return [] }
        return zip(worker.addresses, secureListeners).compactMap { address, tls in address.map { ($0, tls) } }
    }

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
            adminThread = try EventLoopThread.start(name: "formgate-admin") { admin.run() }
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
        tusServices.finish()
    }

    /// New requests use `config`; requests in flight finish with the one they started with.
    /// (The listen address and worker count are not changed by a reload.)
    public func reload(_ config: ServerConfig) {
        // New tus stores are opened here, off the loops (a store that cannot be opened is
        // logged, and its route answers 503).
        for route in config.routes {
            guard let tus = route.tus else { continue }
            do throws(StoreError) {
                _ = try tusServices.service(tus, redis: config.redis)
            } catch {
                ErrorLog.shared.write(.error, "route \(route.name): tus store \(tus.store): \(error)")
            }
        }
        if let tracing = config.tracing {
            if let tracer {
                tracer.exporter.update(settings: tracing)
            } else {
                ErrorLog.shared.write(.warn, "reload: tracing takes effect at the next start")
            }
        }
        for worker in workers { worker.send(.reload(config)) }
        admin?.upstream.withLock { $0 = config.upstream }
        admin?.access.withLock { $0 = AdminServer.Access(config) }
        metrics.update { $0.reloads += 1 }
    }

    /// Loads every TLS listener's certificates again from `config` (the files may have changed
    /// even when the configuration did not): new connections get them, connections already
    /// open keep theirs. A listener whose files do not load keeps its running certificates;
    /// the errors are returned, one per such listener. Listeners are matched by address: a
    /// listener added or removed needs a restart.
    public func reloadCertificates(_ config: ServerConfig) -> [String] {
        var errors: [String] = []
        for context in tlsContexts {
            guard let settings = config.listeners.first(where: { $0.address == context.address })?.tls else {
                errors.append("\(context.address): no longer a TLS listener (takes effect at the next start)")
                continue
            }
            do throws(EventLoopError) {
                try context.reload(settings)
            } catch {
                errors.append("\(context.address): \(error.message)")
            }
        }
        return errors
    }

    /// Reopens the access log file (SIGUSR1, after logrotate moved it).
    public func reopenLogs() {
        accessLog.writer.reopen()
    }

    /// Writes the access log lines still queued (before exiting).
    public func flushLogs() {
        accessLog.writer.flushAndStop()
    }

    /// Exports the spans still queued, for at most `milliseconds`, then stops the exporter
    /// (after `drain`: the requests that ended in it have their spans queued).
    public func flushTraces(milliseconds: Int64) {
        tracer?.exporter.shutdown(within: .milliseconds(max(0, milliseconds)))
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
        tusServices.finish()
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

/// The monotonic clock in microseconds (for latencies below a millisecond).
func monotonicMicroseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1_000
}

public func monotonicMilliseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
}
