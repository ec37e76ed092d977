/// Where resumable uploads live: their info records, their bytes and their stored answers.
///
/// Every call may block (disk, network): the proxy makes them on a store thread, never on an
/// event loop. The offset in an upload's record is the truth: bytes past it were never
/// acknowledged, and `open` drops them.
public protocol UploadStore: AnyObject, Sendable {
    /// Creates an upload: its record, and no bytes.
    func create(_ info: UploadInfo) throws(StoreError)
    /// The upload's record, or nil when there is none (never created, deleted or expired).
    func info(_ id: UploadID) throws(StoreError) -> UploadInfo?
    /// Opens the upload's bytes for appending at its recorded offset (dropping anything
    /// written past it and never committed).
    func open(_ id: UploadID) throws(StoreError) -> any UploadWriter
    /// Writes `info` as the upload's record (after its bytes up to `info.offset` are durable).
    func commit(_ info: UploadInfo) throws(StoreError)
    /// Reads up to `count` bytes of the upload from `offset`; fewer only at its end.
    func read(_ id: UploadID, at offset: Int64, count: Int) throws(StoreError) -> [UInt8]
    /// A descriptor open for reading the upload's bytes, when the store keeps them in a local
    /// file (a delivery then sends them with `sendfile`, never through the process's memory);
    /// nil when it does not. The caller closes it.
    func readDescriptor(_ id: UploadID) throws(StoreError) -> Int32?
    /// The answer the upstream gave to the upload's delivery, once stored.
    func answer(_ id: UploadID) throws(StoreError) -> StoredAnswer?
    /// Stores the delivery's answer, so a retried final PATCH replays it.
    func storeAnswer(_ answer: StoredAnswer, for id: UploadID) throws(StoreError)
    /// Deletes the upload: the record first (from then on it does not exist), then its bytes.
    func delete(_ id: UploadID) throws(StoreError)
    /// The uploads whose expiry is at or before `unixSeconds`.
    func expired(at unixSeconds: Int64) throws(StoreError) -> [UploadID]
    /// Claims the delivery of `id` for this process until `endDelivery`: a store that several
    /// processes share holds the upload's lock meanwhile (`StoreError.locked` when another
    /// holds it), so that two replicas never deliver one upload. A store of one process has
    /// nothing to claim (the default does nothing).
    func beginDelivery(_ id: UploadID) throws(StoreError)
    /// Gives back the claim `beginDelivery` took (after the delivery's answer is stored, or
    /// when it failed); nothing when this process holds none.
    func endDelivery(_ id: UploadID)
}

extension UploadStore {
    public func beginDelivery(_ id: UploadID) throws(StoreError) {}
    public func endDelivery(_ id: UploadID) {}
}

/// Appends to one upload's bytes. Not thread-safe: one PATCH at a time owns it.
public protocol UploadWriter: AnyObject {
    /// The bytes stored so far (the recorded offset when opened).
    var size: Int64 { get }
    /// Appends `bytes`.
    func append(_ bytes: UnsafeRawBufferPointer) throws(StoreError)
    /// Makes every appended byte durable (`fsync`); call before committing the offset.
    func sync() throws(StoreError)
    /// Drops the bytes past `size` (a PATCH whose checksum did not match).
    func truncate(to size: Int64) throws(StoreError)
    /// Releases the writer.
    func close()
}

/// An answer stored after a delivery.
public struct StoredAnswer: Equatable, Sendable {
    public var status: Int
    public var contentType: String?
    public var body: [UInt8]

    public init(status: Int, contentType: String?, body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }
}

extension StoredAnswer {
    /// The answer as a store keeps it: `status\ncontent-type or -\n` then the body.
    public var encoded: [UInt8] {
        let type = contentType.map { $0.isEmpty || $0.utf8.contains(0x0A) ? "-" : $0 } ?? "-"
        return Array("\(status)\n\(type)\n".utf8) + body
    }

    /// Reads what `encoded` wrote; nil when it is not such a record.
    public static func decode(_ bytes: [UInt8]) -> StoredAnswer? {
        guard let first = bytes.firstIndex(of: 0x0A),
            let second = bytes[(first + 1)...].firstIndex(of: 0x0A),
            let status = TusHeaders.nonNegativeInteger(bytes[..<first]), (100...599).contains(status)
        else { return nil }
        let type = String(decoding: bytes[(first + 1)..<second], as: UTF8.self)
        return StoredAnswer(
            status: Int(status), contentType: type == "-" ? nil : type, body: Array(bytes[(second + 1)...]))
    }
}

/// Why a store call failed.
public enum StoreError: Error, Equatable, Sendable {
    /// No space left (ENOSPC, EDQUOT): 507.
    case full
    /// The record exists but cannot be read: the upload is unusable (500, logged).
    case corrupt(UploadID, String)
    /// Any other failure, with the call and `errno` (500, logged).
    case io(String, Int32)
    /// Another process writes or deletes the upload now (a shared store's lock is held): 423.
    case locked
}
