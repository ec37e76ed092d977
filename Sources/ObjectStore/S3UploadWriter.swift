import HTTPCore
import Resumable

#if canImport(Glibc)
    import Glibc
#endif

/// Appends to one upload in the bucket while holding its lock: bytes gather in a buffer of at
/// most one part; each full part goes to the multipart upload at once; `sync` puts the rest as
/// the tail object. What `sync` stored is what the next `commit` records.
final class S3UploadWriter: UploadWriter, @unchecked Sendable {
    let id: UploadID
    let holding: RedisLock.Holding
    private unowned let store: S3UploadStore
    private let length: Int64?
    /// The state when opened (`truncate` goes back to it).
    private let opened: S3UploadState
    /// The parts sent so far (the tail's size is `buffer`'s).
    private var state: S3UploadState
    /// The state as of the last `sync`: what `commit` records.
    private(set) var synced: S3UploadState
    private var buffer: [UInt8]
    private(set) var size: Int64
    private var closed = false

    init(
        store: S3UploadStore, info: UploadInfo, state: S3UploadState, tail: [UInt8],
        holding: RedisLock.Holding
    ) {
        self.store = store
        id = info.id
        length = info.length
        self.holding = holding
        opened = state
        self.state = state
        synced = state
        buffer = tail
        buffer.reserveCapacity(store.partSize)
        size = state.size
    }

    deinit { close() }

    var bufferCount: Int { buffer.count }
    var bufferBytes: [UInt8] { buffer }

    func append(_ bytes: UnsafeRawBufferPointer) throws(StoreError) {
        try holding.renew()
        if state.finalSize != nil {
            // The object is complete already (a replica finished it and died before recording
            // so): the client resends bytes the object holds.
            size += Int64(bytes.count)
            return
        }
        var rest = bytes[...]
        while !rest.isEmpty {
            let taken = min(store.partSize - buffer.count, rest.count)
            buffer.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest.prefix(taken)))
            rest = rest.dropFirst(taken)
            size += Int64(taken)
            if buffer.count == store.partSize { try sendPart() }
        }
    }

    /// Sends the full buffer as the next part.
    private func sendPart() throws(StoreError) {
        try holding.renew()
        let key = store.key(id)
        let multipartID: String
        if let existing = state.multipartID {
            multipartID = existing
        } else {
            multipartID = try store.client.createMultipart(key)
            state.multipartID = multipartID
        }
        let number = state.parts.count + 1
        do throws(StoreError) {
            let tag = try store.client.uploadPart(key, uploadID: multipartID, number: number, buffer)
            state.parts.append(.init(number: number, size: Int64(buffer.count), etag: tag))
        } catch {
            // A completed upload takes no part (NoSuchUpload; moto says 500): complete already?
            guard S3Client.code(of: error) != nil, let length,
                try store.client.size(key) == length
            else { throw error }
            state = S3UploadState()
            state.finalSize = length
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func sync() throws(StoreError) {
        try holding.renew(force: true)
        if state.finalSize == nil {
            if buffer.isEmpty {
                state.tailSize = 0
                state.tailDigest = nil
            } else {
                try store.client.put(store.tailKey(id, start: state.partsSize), buffer)
                state.tailSize = buffer.count
                state.tailDigest = Hex.encode(SHA256.digest(buffer))
            }
        }
        synced = state
    }

    func truncate(to target: Int64) throws(StoreError) {
        guard target != size else { return }
        guard target == opened.size else { throw .io("truncate: only to the opened offset", EINVAL) }
        buffer = try store.tail(id, opened)
        state = opened
        synced = opened
        size = opened.size
    }

    /// The record now says `committed`: the tail it replaced is dropped (best effort).
    func committed(_ committed: S3UploadState) {
        synced = committed
        state = committed
        if committed.finalSize != nil { buffer = [] }
        if opened.tailSize > 0, committed.finalSize != nil || committed.partsSize != opened.partsSize {
            try? store.client.delete(store.tailKey(id, start: opened.partsSize))
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        store.closed(self)
        holding.release()
    }
}
