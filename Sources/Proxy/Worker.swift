public import Config
public import EventLoop
import HTTP1
import HTTPCore
import UploadRules

#if canImport(Glibc)
    import Glibc
#endif

/// One event loop on its own thread: a listener (SO_REUSEPORT), the client connections it
/// accepted, and an upstream connection pool. Nothing here is shared with other workers.
final class Worker {
    let base: EventBase
    let config: ServerConfig
    let pool: UpstreamPool
    let log: AccessLog
    /// libmagic is not thread-safe: one sniffer per worker.
    let sniffer = Sniffer()
    private var listener: Listener?
    private var clients: [ObjectIdentifier: ClientConnection] = [:]
    private var random = SystemRandomNumberGenerator()
    private let maxConnections: Int

    init(config: ServerConfig, workers: Int, log: AccessLog, address: SocketAddress) throws(EventLoopError) {
        base = try EventBase()
        self.config = config
        self.log = log
        pool = UpstreamPool(base: base, caFile: config.upstreamCAFile, idleTimeout: config.timeouts.idle)
        maxConnections = max(1, config.limits.connections / workers)
        listener = try Listener(base: base, address: address, reusePort: true) {
            [unowned self] fd, peer in self.accept(fd, peer)
        }
    }

    /// The address the listener is bound to.
    var address: SocketAddress? { listener?.boundAddress }

    private func accept(_ fd: Int32, _ peer: SocketAddress) {
        guard let socket = try? BufferedSocket.accepted(base: base, fd: fd) else { return }
        let client = ClientConnection(socket: socket, peer: peer, worker: self)
        clients[ObjectIdentifier(client)] = client
        if clients.count >= maxConnections { listener?.disable() }
    }

    func closed(_ client: ClientConnection) {
        clients[ObjectIdentifier(client)] = nil
        if clients.count < maxConnections { listener?.enable() }
    }

    func newRequestID() -> String {
        let digits = Array("0123456789abcdef".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(32)
        for _ in 0..<2 {
            var word = random.next()
            for _ in 0..<16 {
                bytes.append(digits[Int(word & 15)])
                word >>= 4
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Wall-clock Unix seconds (templates, token deadlines).
    var unixTime: Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }

    func log(_ exchange: Exchange, status: Int, client: SocketAddress) {
        log.write(exchange: exchange, status: status, client: client, now: base.nowMilliseconds)
    }

    func logEarly(status: Int, client: SocketAddress, error: String) {
        log.writeEarly(status: status, client: client, error: error)
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
    private var threads: [pthread_t] = []
    let config: ServerConfig

    /// Binds every worker's listener (so errors surface before serving).
    public init(config: ServerConfig) throws(EventLoopError) {
        self.config = config
        let count = config.effectiveWorkers
        let log = AccessLog(destination: config.accessLog)
        var address = try SocketAddress(parsing: config.listen)
        for _ in 0..<count {
            let worker = try Worker(config: config, workers: count, log: log, address: address)
            // With port 0 the first listener picks a port; the others join it (SO_REUSEPORT).
            if let bound = worker.address { address = bound }
            workers.append(worker)
        }
    }

    /// The address clients connect to.
    public var address: SocketAddress? { workers.first?.address }

    /// Starts each worker's loop on its own thread.
    public func start() {
        for worker in workers {
            let box = Unmanaged.passRetained(WorkerBox(worker))
            var thread = pthread_t()
            pthread_create(
                &thread, nil,
                { context in
                    let worker = Unmanaged<WorkerBox>.fromOpaque(context!).takeRetainedValue().worker
                    worker.run()
                    return nil
                }, box.toOpaque())
            threads.append(thread)
        }
    }

    /// Stops every loop and waits for the threads.
    public func stop() {
        for worker in workers { worker.stop() }
        for thread in threads { pthread_join(thread, nil) }
        threads.removeAll()
    }
}

private final class WorkerBox {
    let worker: Worker
    init(_ worker: Worker) { self.worker = worker }
}
