/// The bytes of one PATCH (or of a creation-with-upload) on their way into the store: appended
/// as they arrive, hashed when the client sent `Upload-Checksum`, and committed at the end.
///
/// Runs on the store thread (every call may block on the disk). The upload's record moves only
/// in `finish`: after the bytes are synced, so the recorded offset never counts a byte that
/// could be lost.
public final class PatchSession {
    /// How a PATCH ended.
    public enum Outcome: Equatable, Sendable {
        /// The bytes are committed; the record as stored now.
        case committed(UploadInfo)
        /// `Upload-Checksum` did not match: the bytes were dropped (460).
        case checksumMismatch
    }

    /// Why bytes were refused while they arrived.
    public enum WriteFailure: Error, Equatable, Sendable {
        /// More bytes than the upload's length leaves room for (413).
        case pastLength
        case store(StoreError)
    }

    private let store: any UploadStore
    private var info: UploadInfo
    private let writer: any UploadWriter
    private let hasher: ChecksumHasher?
    private let expected: [UInt8]?
    private let startOffset: Int64
    private var closed = false

    /// Opens the upload for the bytes of a PATCH whose plan is `.write(info)`.
    public init(
        store: any UploadStore, info: UploadInfo, checksum: TusRequest.Checksum?
    ) throws(StoreError) {
        self.store = store
        self.info = info
        writer = try store.open(info.id)
        startOffset = writer.size
        hasher = checksum.map { ChecksumHasher($0.algorithm) }
        expected = checksum?.digest
        if startOffset != info.offset {
            writer.close()
            throw .corrupt(info.id, "the stored bytes end at \(startOffset), the record says \(info.offset)")
        }
    }

    /// The bytes stored so far, this PATCH's included.
    public var offset: Int64 { writer.size }

    /// Appends bytes of the body.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(WriteFailure) {
        if let length = info.length, writer.size + Int64(bytes.count) > length { throw .pastLength }
        do {
            try writer.append(bytes)
        } catch {
            throw .store(error)
        }
        hasher?.update(bytes)
    }

    /// Ends the PATCH. `bodyComplete` is false when the client went away mid-body: without a
    /// checksum what arrived is kept (the protocol's advice), with one it cannot be verified
    /// and is dropped. `expiresAt` is the upload's new expiry (unix seconds).
    public func finish(bodyComplete: Bool, expiresAt: Int64) throws(StoreError) -> Outcome {
        defer { close() }
        if let hasher, let expected {
            guard bodyComplete, hasher.finish() == expected else {
                try writer.truncate(to: startOffset)
                return .checksumMismatch
            }
        }
        if writer.size != info.offset {
            try writer.sync()
            info.offset = writer.size
        }
        info.expiresAt = expiresAt
        try store.commit(info)
        return .committed(info)
    }

    /// Drops this PATCH's bytes (the request was refused after some were written).
    public func abandon() throws(StoreError) {
        defer { close() }
        try writer.truncate(to: startOffset)
    }

    private func close() {
        guard !closed else { return }
        closed = true
        writer.close()
    }
}
