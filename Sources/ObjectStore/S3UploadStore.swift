import Dispatch
import HTTPCore
public import Resumable
public import SharedState
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The object-storage tus store: an S3-compatible bucket that every replica shares, with a
/// Redis lock per upload so that two replicas never write one (DESIGN.md, "Many replicas").
///
/// Under `prefix`, per upload: `{id}.info` (the record and where its bytes are:
/// `S3UploadState`), the multipart upload of `{id}` (one part per `part_size` bytes),
/// `{id}.tail.{start}` (the bytes past the last part), and once complete the object `{id}`
/// and `{id}.answer`. The record is written last, after the parts and the tail it names, so a
/// replica killed at any instant leaves the last committed state; parts and tails it does not
/// name are overwritten or deleted later.
public final class S3UploadStore: UploadStore, @unchecked Sendable {
    let client: S3Client
    let lock: RedisLock
    let prefix: String
    let partSize: Int
    /// The writers open in this process (their uncommitted state is what `commit` records).
    private let writers = Mutex<[UploadID: S3UploadWriter]>([:])
    /// The deliveries this process runs, each under its upload's lock (renewed as it reads),
    /// with the bytes it read ahead.
    private let deliveries = Mutex<[UploadID: DeliveryReader]>([:])
    /// Renews the deliveries' locks while they wait (`startKeeper`), once one began.
    private let keeper = Mutex<(any DispatchSourceTimer)?>(nil)

    /// A store on `settings`' bucket, locking through `redis`. Connects to nothing yet.
    public init(settings: ObjectStoreSettings, redis: RedisSettings, lockMilliseconds: Int64 = 30_000) {
        client = S3Client(settings: settings)
        lock = RedisLock(settings: redis, ttlMilliseconds: lockMilliseconds)
        prefix = settings.prefix
        partSize = max(settings.partSize, 1)
    }

    /// Takes the credentials of `settings` (a reload after a rotated secret file) for the next
    /// S3 requests, and `redis` (a rotated password) for the next lock connections. What names
    /// the store (endpoint, bucket, prefix) is the same; its part size and lock time stay.
    deinit {
        keeper.withLock { $0?.cancel() }
    }

    public func rotate(to settings: ObjectStoreSettings, redis: RedisSettings) {
        client.rotate(to: settings)
        lock.rotate(to: redis)
    }

    func key(_ id: UploadID, _ suffix: String = "") -> String { prefix + id.hex + suffix }

    func tailKey(_ id: UploadID, start: Int64) -> String { key(id, ".tail.\(start)") }

    // MARK: Records

    /// The record and the state of `id`, or nil when it has none.
    func record(_ id: UploadID) throws(StoreError) -> (UploadInfo, S3UploadState)? {
        guard let bytes = try client.get(key(id, ".info")) else { return nil }
        let info: UploadInfo
        do {
            info = try UploadInfo.decode(bytes)
        } catch {
            throw .corrupt(id, error.reason)
        }
        guard let state = S3UploadState.decode(bytes), info.id == id else {
            throw .corrupt(id, "bad s3 state")
        }
        guard state.size == info.offset else {
            throw .corrupt(id, "the record's offset \(info.offset) is not its bytes' \(state.size)")
        }
        return (info, state)
    }

    public func create(_ info: UploadInfo) throws(StoreError) {
        try write(info, S3UploadState(), tail: [], writer: nil)
    }

    public func info(_ id: UploadID) throws(StoreError) -> UploadInfo? {
        try record(id)?.0
    }

    public func open(_ id: UploadID) throws(StoreError) -> any UploadWriter {
        let holding = try lock.acquire(id)
        do throws(StoreError) {
            guard let (info, state) = try record(id) else { throw .io("open: no upload \(id)", ENOENT) }
            let writer = S3UploadWriter(
                store: self, info: info, state: state, tail: try tail(id, state), holding: holding)
            writers.withLock { $0[id] = writer }
            return writer
        } catch {
            holding.release()
            throw error
        }
    }

    /// The committed tail of `id` in `state`: read back, and checked against its digest.
    func tail(_ id: UploadID, _ state: S3UploadState) throws(StoreError) -> [UInt8] {
        guard state.finalSize == nil, state.tailSize > 0 else { return [] }
        guard let bytes = try client.get(tailKey(id, start: state.partsSize), maxBytes: partSize),
            bytes.count >= state.tailSize
        else { throw .corrupt(id, "its tail object is missing or short") }
        let tail = Array(bytes.prefix(state.tailSize))
        guard Hex.encode(SHA256.digest(tail)) == state.tailDigest else {
            throw .corrupt(id, "its tail object is not the bytes its record counts")
        }
        return tail
    }

    func closed(_ writer: S3UploadWriter) {
        writers.withLock { if $0[writer.id] === writer { $0[writer.id] = nil } }
    }

    public func commit(_ info: UploadInfo) throws(StoreError) {
        if let writer = writers.withLock({ $0[info.id] }) {
            try writer.holding.renew(force: true)
            let tail = writer.synced.tailSize == writer.bufferCount ? writer.bufferBytes : nil
            try write(info, writer.synced, tail: tail, writer: writer)
        } else {
            try write(info, try record(info.id)?.1 ?? S3UploadState(), tail: nil, writer: nil)
        }
    }

    /// Writes the record of `info` over `state`, completing the upload first when `info` is
    /// complete (`tail`: the tail's bytes when at hand, else read back).
    private func write(
        _ info: UploadInfo, _ given: S3UploadState, tail: [UInt8]?, writer: S3UploadWriter?
    ) throws(StoreError) {
        var state = given
        guard state.size == info.offset else {
            throw .corrupt(info.id, "committing offset \(info.offset) over \(state.size) stored bytes")
        }
        let replaced = state.partsSize
        if info.isComplete, state.finalSize == nil {
            let bytes: [UInt8]
            if let tail { bytes = tail } else { bytes = try self.tail(info.id, state) }
            state = try complete(info.id, state, tail: bytes, length: info.length ?? 0)
        }
        try client.put(key(info.id, ".info"), state.record(info))
        writer?.committed(state)
        // Tails the record no longer names: best effort (delete removes any left).
        if state.finalSize != nil {
            if given.tailSize > 0 { try? client.delete(tailKey(info.id, start: replaced)) }
        }
    }

    /// Makes the object `{id}` hold the upload's bytes: the tail as the last part and the
    /// multipart upload completed, or (no parts) the tail put whole. A completion that already
    /// happened (a replica killed before its record said so) is recognised by the object's size
    /// when S3 refuses the part or the completion (the object `{id}` is only ever written here).
    func complete(
        _ id: UploadID, _ given: S3UploadState, tail: [UInt8], length: Int64
    ) throws(StoreError) -> S3UploadState {
        var state = given
        if let multipartID = state.multipartID {
            var parts = state.parts.map { ($0.number, $0.etag) }
            do throws(StoreError) {
                if !tail.isEmpty {
                    let tag = try client.uploadPart(
                        key(id), uploadID: multipartID, number: parts.count + 1, tail)
                    parts.append((parts.count + 1, tag))
                }
                try client.completeMultipart(key(id), uploadID: multipartID, parts: parts)
            } catch {
                // S3 says NoSuchUpload (moto a 500): the object is there if a completion happened.
                guard S3Client.code(of: error) != nil, try client.size(key(id)) == length else {
                    throw error
                }
            }
        } else {
            try client.put(key(id), tail)
        }
        state = S3UploadState()
        state.finalSize = length
        return state
    }

    // MARK: Bytes and answers

    /// Reads a complete upload's bytes: a ranged GET of its object. A delivery reads ahead up to
    /// a part's size per GET (each GET costs a round trip, and moto re-reads the whole object).
    public func read(_ id: UploadID, at offset: Int64, count: Int) throws(StoreError) -> [UInt8] {
        guard count > 0 else { return [] }
        guard let reader = deliveries.withLock({ $0[id] }) else {
            return try get(id, at: offset, count: count)
        }
        // A delivery whose lock was lost stops: another replica may deliver the upload now.
        try reader.holding.renew()
        if let bytes = reader.cached(at: offset, count: count) { return bytes }
        let bytes = try get(id, at: offset, count: max(count, partSize))
        reader.keep(bytes, at: offset)
        return Array(bytes.prefix(count))
    }

    private func get(_ id: UploadID, at offset: Int64, count: Int) throws(StoreError) -> [UInt8] {
        guard
            let bytes = try client.get(key(id), range: offset...(offset + Int64(count) - 1), maxBytes: count)
        else { throw .io("read: upload \(id) has no complete object", ENOENT) }
        return bytes
    }

    public func readDescriptor(_ id: UploadID) throws(StoreError) -> Int32? { nil }

    public func answer(_ id: UploadID) throws(StoreError) -> StoredAnswer? {
        guard let bytes = try client.get(key(id, ".answer")) else { return nil }
        guard let answer = StoredAnswer.decode(bytes) else { throw .corrupt(id, "bad answer") }
        return answer
    }

    public func storeAnswer(_ answer: StoredAnswer, for id: UploadID) throws(StoreError) {
        try client.put(key(id, ".answer"), answer.encoded)
    }

    public func beginDelivery(_ id: UploadID) throws(StoreError) {
        let reader = DeliveryReader(holding: try lock.acquire(id))
        let previous = deliveries.withLock { $0.updateValue(reader, forKey: id) }
        previous?.holding.release()
        startKeeper()
    }

    /// Keeps the deliveries' locks while they wait for the upstream's answer (no read renews
    /// them then): every third of the lock's life, on a timer of its own, until the delivery
    /// ends. A retried final PATCH on another replica is 423 all that time, never a second
    /// delivery; only this process dying frees the lock (and the delivery is retried).
    private func startKeeper() {
        keeper.withLock { timer in
            guard timer == nil else { return }
            let source = DispatchSource.makeTimerSource(queue: DispatchQueue.global(qos: .utility))
            let period = max(1, Int(lock.ttlMilliseconds / 3))
            source.schedule(deadline: .now() + .milliseconds(period), repeating: .milliseconds(period))
            source.setEventHandler { [weak self] in self?.keepDeliveries() }
            source.resume()
            timer = source
        }
    }

    private func keepDeliveries() {
        let held = deliveries.withLock { Array($0.values) }
        for reader in held { try? reader.holding.renew(force: true) }
    }

    public func endDelivery(_ id: UploadID) {
        deliveries.withLock { $0.removeValue(forKey: id) }?.holding.release()
    }

    // MARK: Deletion and expiry

    public func delete(_ id: UploadID) throws(StoreError) {
        let holding = try lock.acquire(id)
        defer { holding.release() }
        try client.delete(key(id, ".info"))
        // Everything under `{prefix}{id}`: multipart uploads (the recorded one and any a killed
        // replica began), then objects (tails, the final object, the answer).
        let base = key(id)
        for upload in try client.multipartUploads(prefix: base) where upload.key.hasPrefix(base) {
            try client.abortMultipart(upload.key, uploadID: upload.uploadID)
        }
        for name in try client.keys(prefix: base) where name.hasPrefix(base) {
            try client.delete(name)
        }
    }

    public func expired(at unixSeconds: Int64) throws(StoreError) -> [UploadID] {
        var found: [UploadID] = []
        for name in try client.keys(prefix: prefix) where name.hasSuffix(".info") && name.hasPrefix(prefix) {
            guard let id = UploadID(String(name.dropFirst(prefix.count).dropLast(".info".count))) else {
                continue
            }
            do throws(StoreError) {
                // A record that cannot be read has no expiry to honour (as in `DirectoryStore`);
                // one that S3 did not give back is looked at again by the next scan.
                if let info = try info(id), info.expiresAt <= unixSeconds { found.append(id) }
            } catch {
                guard case .corrupt = error else { throw error }
                found.append(id)
            }
        }
        return found
    }
}

/// One delivery's claim on its upload and the bytes it read ahead (one delivery thread reads).
final class DeliveryReader: @unchecked Sendable {
    let holding: RedisLock.Holding
    private var window: [UInt8] = []
    private var start: Int64 = 0

    init(holding: RedisLock.Holding) {
        self.holding = holding
    }

    /// `count` bytes at `offset` when the window holds them all (or holds the object's end).
    func cached(at offset: Int64, count: Int) -> [UInt8]? {
        let end = start + Int64(window.count)
        guard offset >= start, offset + Int64(count) <= end else { return nil }
        let from = Int(offset - start)
        return Array(window[from..<(from + count)])
    }

    func keep(_ bytes: [UInt8], at offset: Int64) {
        window = bytes
        start = offset
    }
}
