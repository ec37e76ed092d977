import EventLoop
import HTTPCore
import ProxyCore
import SharedState

/// A request's slot in a shared limit: what its end gives back (its concurrency lease, and the
/// byte reservation charged with the bytes actually read).
struct SharedLease {
    let limit: SharedRateLimit
    let client: ClientKey
    let member: String
    let reservedBytes: Int64
}

/// One worker's side of the shared rate limits (`rate_limit: { shared: true }`): its Redis
/// connections, the decisions sent on them, the concurrency leases of its requests in flight
/// (renewed every third of their life, so that only a dead replica's expire), and what happens
/// when Redis cannot decide (`redis.on_error`), counted and logged at most once per
/// `logInterval` with the count since the last line.
final class SharedLimits: RedisObserver {
    static let logInterval: Int64 = 10_000

    let settings: RedisSettings
    private unowned let worker: Worker
    private var connections: [RedisConnection] = []
    private var next = 0
    /// Requests and leases of this worker, numbered (the process's random prefix keeps lease
    /// names of two replicas apart).
    private var counter: UInt64 = 0
    private let prefix: String
    /// Leases in flight, renewed by `renewTimer`.
    private var leases: [String: SharedLease] = [:]
    private var renewTimer: Timer?
    /// Decisions not made by Redis since the last log line, and when that line was written.
    private var undecided = 0
    private var lastUndecidedLog: Int64 = -SharedLimits.logInterval
    private var lastDetail = ""
    /// When the connection's going down was last logged.
    private var lastDownLog: Int64 = -SharedLimits.logInterval
    private var lastDownDetail = ""
    private let index: Int
    /// Whether a connection was up once (a later one comes up "again").
    private var wasUp = false

    init(settings: RedisSettings, worker: Worker, index: Int) {
        self.settings = settings
        self.worker = worker
        self.index = index
        var generator = SystemRandomNumberGenerator()
        prefix = Hex.random(words: 1, using: &generator) + "-\(index)-"
        let setup = [
            SharedLimitScripts.decide.load, SharedLimitScripts.end.load, SharedLimitScripts.renew.load,
        ]
        connections = (0..<settings.connections).map { _ in
            RedisConnection(settings: settings, base: worker.base, observer: self, setup: setup)
        }
    }

    /// Closes the connections (a reload with other settings, or the worker stops).
    func shutdown() {
        renewTimer?.cancel()
        for connection in connections { connection.shutdown() }
    }

    /// Asks Redis about a request; `completion` gets the verdict (and, when admitted, the
    /// request's lease for `end`), from the loop.
    func decide(
        _ limit: SharedRateLimit, client: ClientKey, declaredBytes: Int64?,
        _ completion: @escaping (Verdict, SharedLease?) -> Void
    ) {
        counter += 1
        let nonce = prefix + String(counter)
        let command = limit.decide(
            client: client, declaredBytes: declaredBytes, nonce: nonce, lease: nonce,
            script: SharedLimitScripts.decide)
        let connection = connections[next]
        send(command, script: SharedLimitScripts.decide) { [weak self] result in
            guard let self else { return completion(.decideLocally, nil) }
            switch result {
            case .success(let reply):
                switch limit.outcome(of: reply, nonce: nonce, declaredBytes: declaredBytes) {
                case .admitted(let reserved):
                    let lease = SharedLease(
                        limit: limit, client: client, member: nonce, reservedBytes: reserved)
                    if limit.limit.concurrent != nil { self.hold(lease) }
                    completion(.release(nil, tally: nil), lease)
                case .limited(let kind, let seconds):
                    completion(.refuse(.rateLimited(kind, retryAfterSeconds: seconds)), nil)
                case nil:
                    // Not the script's answer to this command: unless Redis said why (an error
                    // reply), replies and commands no longer match on this connection.
                    if case .error = reply {} else { connection.desynchronized() }
                    completion(self.undecided(limit, detail: Self.describe(reply)), nil)
                }
            case .failure(let failure):
                completion(self.undecided(limit, detail: failure.detail), nil)
            }
        }
    }

    /// A request the shared limit admitted ended, having read `bytes` of its body.
    func end(_ lease: SharedLease, bytes: Int64) {
        leases[lease.member] = nil
        counter += 1
        let nonce = prefix + String(counter)
        guard
            let command = lease.limit.end(
                client: lease.client, lease: lease.member, reservedBytes: lease.reservedBytes,
                readBytes: bytes,
                nonce: nonce, script: SharedLimitScripts.end)
        else { return }
        // A lost end is repaired by the lease's expiry and the budget's refill.
        send(command, script: SharedLimitScripts.end) { _ in }
    }

    /// Whether Redis decides now (every connection up).
    var isUp: Bool { connections.allSatisfy(\.isUp) }

    /// `EVALSHA` on the next connection; `EVAL` when Redis lost the script (`NOSCRIPT`).
    private func send(
        _ command: [[UInt8]], script: SharedLimitScripts.Script,
        _ completion: @escaping (Result<RESPValue, RedisFailure>) -> Void
    ) {
        let connection = connections[next]
        next = (next + 1) % connections.count
        connection.send(command) { result in
            if case .success(.error(let message)) = result, message.hasPrefix("NOSCRIPT") {
                connection.send(script.eval(fromEvalsha: command), completion)
            } else {
                completion(result)
            }
        }
    }

    /// Redis did not decide: `on_error` does; counted, and logged once per interval.
    private func undecided(_ limit: SharedRateLimit, detail: String) -> Verdict {
        undecided += 1
        lastDetail = detail
        let policy = limit.onError
        worker.metrics.update { $0.redisUndecided[policy.rawValue, default: 0] += 1 }
        let now = monotonicMilliseconds()
        if now - lastUndecidedLog >= Self.logInterval {
            lastUndecidedLog = now
            let action =
                switch policy {
                case .local: "decided by this process's own limits"
                case .allow: "let through (on_error: allow)"
                case .deny: "refused with 503 (on_error: deny)"
                }
            ErrorLog.shared.write(
                .warn,
                "redis: \(undecided) shared rate-limit decision(s) \(action) since the last line: \(lastDetail)"
            )
            undecided = 0
        }
        switch policy {
        case .local: return .decideLocally
        case .allow: return .release(nil, tally: nil)
        case .deny: return .refuse(.sharedLimitUndecided)
        }
    }

    private func hold(_ lease: SharedLease) {
        leases[lease.member] = lease
        guard renewTimer == nil else { return }
        let period = max(1_000, lease.limit.leaseMilliseconds / 3)
        let timer = Timer(base: worker.base, repeating: true) { [weak self] in self?.renew() }
        timer.schedule(milliseconds: period)
        renewTimer = timer
    }

    /// Pushes the expiry of every lease in flight, 256 to a command.
    private func renew() {
        var batch: [SharedLease] = []
        for lease in leases.values {
            batch.append(lease)
            if batch.count == 256 {
                renew(batch)
                batch = []
            }
        }
        if !batch.isEmpty { renew(batch) }
    }

    private func renew(_ batch: [SharedLease]) {
        counter += 1
        let life = batch.map(\.limit.leaseMilliseconds).max() ?? 30_000
        let keys = batch.map { $0.limit.leaseKey(for: $0.client) }
        let arguments = [prefix + String(counter), String(life)] + batch.map(\.member)
        send(
            SharedLimitScripts.renew.evalsha(keys: keys, arguments: arguments),
            script: SharedLimitScripts.renew
        ) {
            _ in
        }
    }

    func redisCommand(result: String, microseconds: Int64) {
        worker.metrics.update { state in
            state.redisCommands[result, default: 0] += 1
            if result == "ok" || result == "error" {
                state.redisDuration.observe(Double(microseconds) / 1_000_000)
            }
        }
    }

    func redisConnection(up: Bool, detail: String) {
        let allUp = isUp
        worker.metrics.update { $0.redisUp[index] = allUp }
        if up {
            ErrorLog.shared.write(.info, "redis: \(detail)\(wasUp ? " again" : "")")
            wasUp = true
        } else {
            let now = monotonicMilliseconds()
            if now - lastDownLog >= Self.logInterval || lastDownDetail != detail {
                lastDownDetail = detail
                lastDownLog = now
                ErrorLog.shared.write(.warn, "redis: \(detail)")
            }
        }
    }

    private static func describe(_ reply: RESPValue) -> String {
        switch reply {
        case .error(let message): "redis answered an error: \(message.prefix(120))"
        default: "redis's reply is not the script's answer"
        }
    }
}
