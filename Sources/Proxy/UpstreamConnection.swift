import Config
import EventLoop
import ProxyCore

/// Receives an upstream connection's events while it serves a request.
protocol UpstreamOwner: AnyObject {
    func upstreamConnected(_ upstream: UpstreamConnection)
    func upstreamReadable(_ upstream: UpstreamConnection)
    func upstreamWritable(_ upstream: UpstreamConnection)
    func upstream(_ upstream: UpstreamConnection, failed events: SocketEvents)
}

/// One connection to an upstream: serving a request for its owner, or idle in the pool.
final class UpstreamConnection: BufferedSocketDelegate {
    let target: UpstreamURL
    let socket: BufferedSocket
    /// The exchange's host it serves; cleared by `release`, `discard` and `close()`, which
    /// every host's end goes through (`ExchangeIO`). Strong, not weak: a weak reference gave
    /// each HTTP/2 stream a side table (see `BufferedSocket.delegate`).
    var owner: (any UpstreamOwner)?
    unowned let pool: UpstreamPool
    private(set) var isConnected = false
    /// Requests this connection has carried (more than 0 means it came from the pool).
    var requestsServed = 0
    /// Who holds the connection, and so whether its idle deadline runs: the pool executes
    /// what the lease returns.
    var lease: UpstreamLease

    /// Wraps a socket being connected; the owner's exchange times the connect.
    init(target: UpstreamURL, socket: BufferedSocket, pool: UpstreamPool) {
        self.target = target
        self.socket = socket
        self.pool = pool
        lease = UpstreamLease(idleTimeout: pool.idleTimeout)
        socket.delegate = self
    }

    func socketReadable(_ socket: BufferedSocket) {
        if let owner {
            owner.upstreamReadable(self)
        } else {
            pool.discard(self)  // an idle connection that speaks is broken or closing
        }
    }

    func socketWritable(_ socket: BufferedSocket) {
        owner?.upstreamWritable(self)
    }

    func socket(_ socket: BufferedSocket, events: SocketEvents) {
        if events.contains(.connected) {
            isConnected = true
            socket.setNoDelay()
            socket.enable()
            owner?.upstreamConnected(self)
            return
        }
        if let owner {
            owner.upstream(self, failed: events)
        } else {
            pool.discard(self)
        }
    }

    /// Closes the socket.
    func close() {
        owner = nil
        socket.close()
    }
}

/// Idle keep-alive connections per upstream, for one worker.
final class UpstreamPool {
    let base: EventBase
    /// The idle connections of each upstream, found through `slots`: a lookup through the
    /// dictionary's getter and a change through the array's index, because changing the
    /// dictionary's value in place (`idle[target]?.popLast()`) allocated its accessors' frames,
    /// three allocations per request.
    private var idle: [[UpstreamConnection]] = []
    /// Index in `idle` of each upstream that ever had an idle connection.
    private var slots: [UpstreamURL: Int] = [:]
    /// The upstream looked up last and its slot: nearly every request goes to the same one,
    /// and comparing it costs less than hashing its host (twice per request).
    private var lastTarget: UpstreamURL?
    private var lastSlot = 0
    private let caFile: String?
    private var tlsContext: TLSClientContext?
    private var tlsSetupError: String?
    /// The most idle connections kept per upstream: as many as a worker's exchanges had open
    /// at once, up to this. HTTP/2 multiplies them (64 clients × 10 streams is 320 exchanges
    /// per worker), and the old cap of 64 made half of the h2 bench's 4 KiB uploads open a new
    /// upstream connection (10,916 `connect`s in 20,000 requests, seen with `strace -c`).
    let maxIdlePerUpstream = 1024
    let idleTimeout: Int64
    /// One timer for the idle deadlines of all the pool's connections, armed for the earliest
    /// (`idleTimerDeadline`). Each list in `idle` is in release order (`acquire` takes the
    /// newest), so its first connection's deadline is its earliest. A connection an exchange
    /// takes leaves the lists the timer looks at, so nothing is cancelled per request, and
    /// under load (some connection always idle) nothing is armed per request either: the
    /// socket's read timeout, used before, cost an `event_add` per release.
    private var idleTimer: Timer?
    private var idleTimerDeadline: Int64?
    /// Connections opened and reused, for tests and metrics.
    private(set) var opened = 0
    private(set) var reused = 0

    init(base: EventBase, caFile: String?, idleTimeout: Int64) {
        self.base = base
        self.caFile = caFile
        self.idleTimeout = idleTimeout
        idleTimer = Timer(base: base) { [unowned self] in self.idleTimerFired() }
    }

    /// The client TLS context for https upstreams and auth services (`upstream_ca_file`, else
    /// the system store), made when first needed; `nil` when it cannot be (`tlsSetupError`).
    func clientTLS() -> TLSClientContext? {
        if let tlsContext { return tlsContext }
        do throws(EventLoopError) {
            tlsContext = try TLSClientContext(caFile: caFile)
        } catch {
            tlsSetupError = "\(error)"
        }
        return tlsContext
    }

    /// An idle connection to `target`, or a new one being connected.
    func acquire(_ target: UpstreamURL, owner: any UpstreamOwner) throws(ProxyError)
        -> UpstreamConnection
    {
        while let slot = existingSlot(target), let connection = idle[slot].popLast() {
            guard connection.socket.isOpen else { continue }
            connection.owner = owner
            perform(connection.lease.acquired(), on: connection)
            reused += 1
            return connection
        }
        let tls: TLSClientContext?
        if target.scheme == .https {
            guard let context = clientTLS() else {
                throw ProxyError(.upstreamUnreachable, detail: "TLS setup failed: \(tlsSetupError ?? "")")
            }
            tls = context
        } else {
            tls = nil
        }
        let placeholder = PendingOwner()
        let socket: BufferedSocket
        do throws(EventLoopError) {
            socket = try BufferedSocket.connect(
                base: base, host: target.host, port: target.port, tls: tls, delegate: placeholder)
        } catch {
            throw ProxyError(.upstreamUnreachable, detail: "cannot connect to the upstream")
        }
        let connection = UpstreamConnection(target: target, socket: socket, pool: self)
        connection.owner = owner
        opened += 1
        return connection
    }

    /// Returns a connection whose exchange ended cleanly, for reuse.
    func release(_ connection: UpstreamConnection) {
        connection.owner = nil
        let slot = slot(for: connection.target)
        guard connection.socket.isOpen, idle[slot].count < maxIdlePerUpstream else {
            connection.close()
            return
        }
        connection.socket.setReading(true)
        idle[slot].append(connection)
        perform(connection.lease.released(now: base.nowMilliseconds), on: connection)
    }

    /// Executes what a connection's lease decided.
    private func perform(_ action: UpstreamLease.Action, on connection: UpstreamConnection) {
        switch action {
        case .armIdleTimer(let deadline):
            armIdleTimer(for: deadline)
        case .cancelIdleTimer:
            break  // it left `idle`: the timer, armed for another connection or none, skips it
        case .close:
            discard(connection)
        case .none:
            break
        }
    }

    /// Makes the idle timer fire by `deadline`.
    private func armIdleTimer(for deadline: Int64) {
        if let armed = idleTimerDeadline, armed <= deadline { return }
        idleTimerDeadline = deadline
        idleTimer?.schedule(milliseconds: max(0, deadline - base.nowMilliseconds))
    }

    /// Closes the idle connections whose deadline has come, oldest first, and re-arms the
    /// timer for the earliest deadline left.
    private func idleTimerFired() {
        idleTimerDeadline = nil
        let now = base.nowMilliseconds
        for slot in idle.indices {
            while let oldest = idle[slot].first {
                let action = oldest.lease.idleTimerFired(now: now)
                perform(action, on: oldest)
                // `.close` discarded it; anything else leaves it (and the newer ones) idle.
                if action != .close || idle[slot].first === oldest { break }
            }
        }
    }

    /// The index in `idle` of `target`'s connections (a new, empty list the first time).
    private func slot(for target: UpstreamURL) -> Int {
        if let slot = existingSlot(target) { return slot }
        idle.append([])
        slots[target] = idle.count - 1
        return idle.count - 1
    }

    /// The index in `idle` of `target`'s connections, if it has a list.
    private func existingSlot(_ target: UpstreamURL) -> Int? {
        if let lastTarget, lastTarget == target { return lastSlot }
        guard let slot = slots[target] else { return nil }
        lastTarget = target
        lastSlot = slot
        return slot
    }

    /// Closes a connection and forgets it.
    func discard(_ connection: UpstreamConnection) {
        if let slot = existingSlot(connection.target),
            let index = idle[slot].firstIndex(where: { $0 === connection })
        {
            idle[slot].remove(at: index)
        }
        connection.close()
    }

    /// Closes every idle connection.
    func closeAll() {
        idleTimer?.cancel()
        idleTimerDeadline = nil
        for list in idle {
            for connection in list { connection.close() }
        }
        idle.removeAll()
        slots.removeAll()
        lastTarget = nil
    }

    /// The number of idle connections.
    var idleCount: Int { idle.reduce(0) { $0 + $1.count } }
}

/// A delegate for the instant between creating a socket and wrapping it.
private final class PendingOwner: BufferedSocketDelegate {
    func socketReadable(_ socket: BufferedSocket) {}
    func socketWritable(_ socket: BufferedSocket) {}
    func socket(_ socket: BufferedSocket, events: SocketEvents) {}
}
