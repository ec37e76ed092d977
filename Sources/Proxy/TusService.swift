import EventLoop
import ObjectStore
import Resumable
import SharedState
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One tus store shared by every worker and every route that names it (its directory, or its
/// bucket and prefix): the store,
/// the threads its disk work runs on, and what must be decided across workers (which request
/// writes an upload, which delivery runs).
///
/// Every store call runs on a job thread (`SerialJobThread`), never on an event loop. An
/// upload's calls all run on the same thread, in the order they were queued (the thread is
/// chosen by its id), so two requests on one upload never interleave their writes, even from
/// two workers.
final class TusService: @unchecked Sendable {
    let store: any UploadStore
    /// The store's directory, or an object store's description (never a credential): what the
    /// log calls it.
    let directory: String
    private let threads: [SerialJobThread]
    private let shared = Mutex(Shared())

    /// Deliveries that may run at once; more are 503 (the client's next final PATCH retries).
    static let maxDeliveries = 32

    struct Shared {
        /// The PATCH writing each upload (store threads only read and change their uploads').
        var writers: [UploadID: PatchWork] = [:]
        /// Uploads being delivered, with whoever waits for the answer.
        var deliveries: [UploadID: [@Sendable (DeliveryOutcome) -> Void]] = [:]
        /// Uploads whose answer this process stored: a final PATCH that read no answer just
        /// before it was stored must not deliver again.
        var answered: Set<UploadID> = []
    }

    /// How a caller joins a delivery (`joinDelivery`).
    enum Join {
        /// No delivery runs: the caller runs it.
        case run
        /// One runs: the caller hears its outcome.
        case wait
        /// The answer was stored since the caller looked: read it.
        case stored
        /// Too many run: 503.
        case busy
    }

    init(store: any UploadStore, name: String, threads count: Int) {
        self.store = store
        directory = name
        threads = (0..<max(1, count)).map { SerialJobThread(name: "fg-tus-\($0)") }
    }

    /// Runs `job` on `id`'s store thread.
    func submit(_ id: UploadID, _ job: @escaping @Sendable () -> Void) {
        threads[Self.threadIndex(id, of: threads.count)].submit(job)
    }

    static func threadIndex(_ id: UploadID, of count: Int) -> Int {
        Int(UInt32(id.hex.prefix(8), radix: 16) ?? 0) % count
    }

    /// Ends the threads after the jobs queued so far.
    func finish() {
        for thread in threads { thread.finish() }
    }

    // MARK: Writers (store threads)

    /// Makes `work` the one PATCH writing its upload. A PATCH still holding it (a client that
    /// vanished without its connection closing, then resumed) is superseded: its bytes past
    /// the recorded offset were never acknowledged and are dropped, and it writes no more.
    func claim(_ work: PatchWork) {
        let previous = shared.withLock { state in
            defer { state.writers[work.id] = work }
            return state.writers[work.id]
        }
        previous?.supersede()
        previous?.end()
    }

    /// `work` is done with its upload.
    func release(_ work: PatchWork) {
        shared.withLock { state in
            if state.writers[work.id] === work { state.writers[work.id] = nil }
        }
        work.end()
    }

    /// The upload is being deleted: a PATCH writing it writes no more.
    func supersedeWriter(of id: UploadID) {
        let writer = shared.withLock { $0.writers.removeValue(forKey: id) }
        writer?.supersede()
        writer?.end()
    }

    // MARK: Deliveries

    /// Joins the delivery of `id` (`waiter` hears the outcome when it is `.run` or `.wait`).
    func joinDelivery(_ id: UploadID, waiter: @escaping @Sendable (DeliveryOutcome) -> Void) -> Join {
        shared.withLock { state in
            if state.answered.contains(id) { return .stored }
            if state.deliveries[id] != nil {
                state.deliveries[id]!.append(waiter)
                return .wait
            }
            guard state.deliveries.count < Self.maxDeliveries else { return .busy }
            state.deliveries[id] = [waiter]
            return .run
        }
    }

    /// `id` is deleted: it has no answer any more.
    func forget(_ id: UploadID) {
        _ = shared.withLock { $0.answered.remove(id) }
    }

    /// Whether a PATCH writes `id` or a delivery reads it now.
    func isBusy(_ id: UploadID) -> Bool {
        shared.withLock { $0.writers[id] != nil || $0.deliveries[id] != nil }
    }

    /// The delivery of `id` ended: everyone who joined it hears `outcome`.
    func deliveryEnded(_ id: UploadID, _ outcome: DeliveryOutcome) {
        let waiters: [@Sendable (DeliveryOutcome) -> Void] = shared.withLock { state in
            if case .answered(let stored) = outcome, stored.status < 500 { state.answered.insert(id) }
            return state.deliveries.removeValue(forKey: id) ?? []
        }
        for waiter in waiters { waiter(outcome) }
    }
}

/// How a delivery ended.
enum DeliveryOutcome: Sendable, Equatable {
    /// The upstream answered (the answer is stored when it is not a 5xx).
    case answered(StoredAnswer)
    /// It could not be had: the status and reason the final PATCH gets (retried by the next).
    case failed(status: Int, reason: String)
}

/// The store-thread side of one PATCH (or creation-with-upload): its session, and whether a
/// later request on the same upload superseded it. Touched only by its upload's store thread.
final class PatchWork: @unchecked Sendable {
    let id: UploadID
    var session: PatchSession?
    private(set) var superseded = false
    /// Called once, when the work lets its upload go (the active-writers gauge).
    private var ended: (@Sendable () -> Void)?

    init(id: UploadID, ended: @escaping @Sendable () -> Void) {
        self.id = id
        self.ended = ended
    }

    /// The work lets its upload go.
    func end() {
        let ended = self.ended
        self.ended = nil
        ended?()
    }

    /// A later PATCH took the upload: the bytes this one wrote and never committed go.
    func supersede() {
        superseded = true
        try? session?.abandon()
        session = nil
    }
}

/// The tus services of the server, one per store (kept across reloads, so uploads in flight
/// continue under a new configuration).
final class TusServices: @unchecked Sendable {
    private let services = Mutex<[String: TusService]>([:])
    private let threadsPerStore: Int

    init(threadsPerStore: Int) {
        self.threadsPerStore = threadsPerStore
    }

    /// The service of `tus`'s store, created (a directory store's directory with it) on first
    /// use. An object store locks through `redis`, which it needs; an existing one takes the
    /// credentials given (a reload may have read rotated secret files).
    func service(_ tus: TusSettings, redis: RedisSettings?) throws(StoreError) -> TusService {
        let name = tus.store
        if let existing = services.withLock({ $0[name] }) {
            if let objectStore = tus.objectStore, let redis, let store = existing.store as? S3UploadStore {
                store.rotate(to: objectStore, redis: redis)
            }
            return existing
        }
        let store: any UploadStore
        if let objectStore = tus.objectStore {
            guard let redis else { throw .io("an s3 store needs redis: for its locks", EINVAL) }
            store = S3UploadStore(
                settings: objectStore, redis: redis, lockMilliseconds: objectStore.lockMilliseconds)
        } else {
            store = try DirectoryStore(path: name)
        }
        let created = TusService(store: store, name: name, threads: threadsPerStore)
        return services.withLock { state in
            if let existing = state[name] { return existing }
            state[name] = created
            return created
        }
    }

    /// Every service, for the expiry timer and shutdown.
    var all: [TusService] { services.withLock { Array($0.values) } }

    func finish() {
        for service in all { service.finish() }
    }
}
