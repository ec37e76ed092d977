import Foundation
import Resumable
import Testing

@testable import ObjectStore

/// `S3UploadStore` against moto's S3 server and a real redis-server (each test its own), with
/// 5 MiB parts (S3's minimum) so that a few MiB cross part boundaries.
@Suite struct S3UploadStoreTests {
    static let part = ObjectStoreSettings.minimumPartSize

    static func info(_ id: UploadID, length: Int64?, expiresAt: Int64 = 4_000_000_000) -> UploadInfo {
        UploadInfo(id: id, length: length, createdAt: 1_000, expiresAt: expiresAt)
    }

    /// Appends `bytes` in pieces of `piece`.
    static func append(_ writer: any UploadWriter, _ bytes: ArraySlice<UInt8>, piece: Int) throws {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let end = min(offset + piece, bytes.endIndex)
            let chunk = Array(bytes[offset..<end])
            let failure: StoreError? = chunk.withUnsafeBytes { raw in
                do throws(StoreError) {
                    try writer.append(raw)
                    return nil
                } catch {
                    return error
                }
            }
            if let failure { throw failure }
            offset = end
        }
    }

    /// One PATCH: open, append, sync, commit, close.
    static func patch(_ store: S3UploadStore, _ info: inout UploadInfo, _ bytes: ArraySlice<UInt8>) throws {
        let writer = try store.open(info.id)
        defer { writer.close() }
        #expect(writer.size == info.offset)
        try append(writer, bytes, piece: 700 * 1024 + 13)
        try writer.sync()
        info.offset = writer.size
        try store.commit(info)
    }

    static func readAll(_ store: S3UploadStore, _ id: UploadID, length: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        while bytes.count < length {
            let chunk = try store.read(id, at: Int64(bytes.count), count: min(1 << 20, length - bytes.count))
            guard !chunk.isEmpty else { break }
            bytes += chunk
        }
        return bytes
    }

    /// What is left in the bucket under `prefix`: object keys and multipart uploads.
    static func leftovers(_ servers: StoreServers, _ prefix: String) throws -> [String] {
        let client = servers.client(prefix: prefix)
        return try client.keys(prefix: prefix)
            + client.multipartUploads(prefix: prefix).map { "multipart " + $0.key }
    }

    @Test func uploadAcrossPartsReopenReadAnswerDelete() throws {
        let servers = try StoreServers()
        let store = servers.store(prefix: "t1/")
        let seed: UInt64 = 31_001
        let data = seededBytes(2 * Self.part + 3 * 1024 * 1024 + 17, seed: seed)
        let id = UploadID.random()
        var info = Self.info(id, length: Int64(data.count))
        try store.create(info)
        #expect(try store.info(id) == info)
        // First PATCH: past one part boundary, its rest in the tail.
        let first = Self.part + 1024 * 1024 + 5
        try Self.patch(store, &info, data[..<first])
        #expect(try store.info(id)?.offset == Int64(first), "seed \(seed)")
        // A PATCH that wrote and never committed: its bytes are dropped at the next open.
        do {
            let writer = try store.open(id)
            try Self.append(writer, seededBytes(Self.part + 3, seed: 99)[...], piece: 1 << 20)
            writer.close()
        }
        // Second PATCH: the rest, completing the upload.
        try Self.patch(store, &info, data[first...])
        #expect(try store.info(id)?.offset == Int64(data.count))
        #expect(try Self.readAll(store, id, length: data.count) == data, "byte-exact (seed \(seed))")
        #expect(try store.read(id, at: 10, count: 5) == Array(data[10..<15]))
        // A delivery reads ahead a part at a time: the same bytes.
        try store.beginDelivery(id)
        #expect(try Self.readAll(store, id, length: data.count) == data, "read ahead (seed \(seed))")
        #expect(try store.read(id, at: 10, count: 5) == Array(data[10..<15]))
        store.endDelivery(id)
        #expect(try store.readDescriptor(id) == nil)
        #expect(try store.answer(id) == nil)
        let answer = StoredAnswer(
            status: 201, contentType: "application/json", body: Array("{\"ok\":1}".utf8))
        try store.storeAnswer(answer, for: id)
        #expect(try store.answer(id) == answer)
        // Another replica sees the same upload and answer.
        let other = servers.store(prefix: "t1/")
        #expect(try other.info(id)?.offset == Int64(data.count))
        #expect(try other.answer(id) == answer)
        try store.delete(id)
        #expect(try store.info(id) == nil)
        #expect(try Self.leftovers(servers, "t1/") == [])
    }

    @Test func smallUploadsLiveInTheTailThenOneObject() throws {
        let servers = try StoreServers()
        let store = servers.store(prefix: "t2/")
        let data = seededBytes(300_000, seed: 31_002)
        let id = UploadID.random()
        var info = Self.info(id, length: Int64(data.count))
        try store.create(info)
        try Self.patch(store, &info, data[..<100_000])
        #expect(
            try store.client.keys(prefix: "t2/").sorted() == ["t2/\(id.hex).info", "t2/\(id.hex).tail.0"])
        let reopened = try store.open(id)
        #expect(reopened.size == 100_000)
        reopened.close()
        try Self.patch(store, &info, data[100_000...])
        #expect(try Self.readAll(store, id, length: data.count) == data)
        #expect(try store.client.multipartUploads(prefix: "t2/").isEmpty)
        #expect(try store.client.keys(prefix: "t2/").sorted() == ["t2/\(id.hex)", "t2/\(id.hex).info"])
        // An empty upload is complete at its creation.
        let empty = UploadID.random()
        try store.create(Self.info(empty, length: 0))
        #expect(try store.client.size("t2/\(empty.hex)") == 0)
        try store.delete(id)
        try store.delete(empty)
        #expect(try Self.leftovers(servers, "t2/") == [])
    }

    @Test func checksumMismatchTruncatesToTheOpenedOffset() throws {
        let servers = try StoreServers()
        let store = servers.store(prefix: "t3/")
        let data = seededBytes(Self.part + 2_000_000, seed: 31_003)
        let id = UploadID.random()
        var info = Self.info(id, length: Int64(data.count))
        try store.create(info)
        try Self.patch(store, &info, data[..<1_000_000])
        let writer = try store.open(id)
        try Self.append(writer, seededBytes(Self.part, seed: 7)[...], piece: 1 << 20)
        try writer.truncate(to: 1_000_000)
        #expect(writer.size == 1_000_000)
        try Self.append(writer, data[1_000_000...], piece: 1 << 20)
        try writer.sync()
        info.offset = writer.size
        try store.commit(info)
        writer.close()
        #expect(try Self.readAll(store, id, length: data.count) == data, "seed 31003")
    }

    @Test func aSecondReplicaIsLockedOut() throws {
        let servers = try StoreServers()
        let replicaA = servers.store(prefix: "t4/")
        let replicaB = servers.store(prefix: "t4/")
        let id = UploadID.random()
        var info = Self.info(id, length: 100)
        try replicaA.create(info)
        let writer = try replicaA.open(id)
        #expect(throws: StoreError.locked) { _ = try replicaB.open(id) }
        #expect(throws: StoreError.locked) { try replicaB.delete(id) }
        writer.close()
        try Self.patch(replicaB, &info, seededBytes(10, seed: 4)[...])
        #expect(try replicaA.info(id)?.offset == 10)
        // A delivery holds the upload too: one replica delivers it.
        try replicaA.beginDelivery(id)
        #expect(throws: StoreError.locked) { try replicaB.beginDelivery(id) }
        #expect(throws: StoreError.locked) { _ = try replicaB.open(id) }
        replicaB.endDelivery(id)
        #expect(throws: StoreError.locked) { try replicaB.beginDelivery(id) }
        replicaA.endDelivery(id)
        try replicaB.beginDelivery(id)
        replicaB.endDelivery(id)
        try replicaA.delete(id)
    }

    @Test func aDeliveryWaitingOnItsUpstreamKeepsItsLock() throws {
        let servers = try StoreServers()
        let replicaA = servers.store(prefix: "t6/", lockMilliseconds: 1_500)
        let replicaB = servers.store(prefix: "t6/", lockMilliseconds: 1_500)
        let id = UploadID.random()
        var info = Self.info(id, length: 10)
        try replicaA.create(info)
        try Self.patch(replicaA, &info, seededBytes(10, seed: 6)[...])
        try replicaA.beginDelivery(id)
        // No read renews it (the upstream has the bytes, its answer is awaited): three lock
        // lives later, the other replica is still locked out.
        let start = Date()
        while Date().timeIntervalSince(start) < 4.5 {
            #expect(throws: StoreError.locked) { try replicaB.beginDelivery(id) }
            Thread.sleep(forTimeInterval: 0.25)
        }
        replicaA.endDelivery(id)
        try replicaB.beginDelivery(id)
        replicaB.endDelivery(id)
        try replicaA.delete(id)
    }

    @Test func aLostLockStopsTheWriter() throws {
        let servers = try StoreServers()
        let store = servers.store(prefix: "t5/")
        let id = UploadID.random()
        var info = Self.info(id, length: 10_000_000)
        try store.create(info)
        let writer = try store.open(id)
        try Self.append(writer, seededBytes(1000, seed: 5)[...], piece: 1000)
        // Someone else holds the lock now (ours expired and was taken).
        let key = store.lock.key(id)
        _ = try store.lock.run(["SET", key, "someone-else", "PX", "30000"])
        #expect(throws: StoreError.locked) { try writer.sync() }
        info.offset = 1000
        #expect(throws: StoreError.locked) { try store.commit(info) }
        writer.close()
        // The other holder's lock survives our release.
        #expect(try store.lock.run(["GET", key]) == .bulk(Array("someone-else".utf8)))
        #expect(try store.info(id)?.offset == 0)
    }

    @Test func expiredListsOnlyUploadsPastTheirExpiry() throws {
        let servers = try StoreServers()
        let store = servers.store(prefix: "t6/")
        let old = UploadID.random()
        let fresh = UploadID.random()
        var info = Self.info(old, length: Int64(Self.part * 2 + 1), expiresAt: 100)
        try store.create(info)
        // Parts, a tail and a multipart upload, all to go with it.
        try Self.patch(store, &info, seededBytes(Self.part + 10, seed: 6)[...])
        try store.create(Self.info(fresh, length: 10, expiresAt: 10_000))
        #expect(try store.expired(at: 5_000) == [old])
        try store.delete(old)
        #expect(try store.expired(at: 5_000) == [])
        #expect(try store.expired(at: 20_000) == [fresh])
        try store.delete(fresh)
        #expect(try Self.leftovers(servers, "t6/") == [])
    }

    /// A replica that completed the multipart upload and died before its record said so: the
    /// next PATCH resends the last bytes, and the completion is recognised.
    @Test func aCompletionWithoutItsRecordIsRecovered() throws {
        let servers = try StoreServers()
        let store = servers.store(prefix: "t7/")
        let data = seededBytes(Self.part * 2 + 1000, seed: 31_007)
        let id = UploadID.random()
        var info = Self.info(id, length: Int64(data.count))
        try store.create(info)
        try Self.patch(store, &info, data[..<(Self.part + 10)])
        // The dead replica's last PATCH: every byte sent and the upload completed, no record.
        do {
            let writer = try store.open(id) as! S3UploadWriter
            try Self.append(writer, data[(Self.part + 10)...], piece: 1 << 20)
            try writer.sync()
            _ = try store.complete(id, writer.synced, tail: writer.bufferBytes, length: Int64(data.count))
            writer.close()
        }
        #expect(try store.info(id)?.offset == Int64(Self.part + 10))
        try Self.patch(store, &info, data[(Self.part + 10)...])
        #expect(try store.info(id)?.offset == Int64(data.count))
        #expect(try Self.readAll(store, id, length: data.count) == data, "seed 31007")
    }
}

/// A reload's rotated settings reach a store that exists already.
@Suite struct S3UploadStoreRotationTests {
    @Test func theLockFollowsRotatedRedisSettings() throws {
        let servers = try StoreServers()
        var wrong = servers.redisSettings
        wrong.address = .tcp(host: "127.0.0.1", port: try freePort())
        let store = S3UploadStore(settings: servers.settings(prefix: "t8/"), redis: wrong)
        let id = UploadID.random()
        #expect(throws: StoreError.self) { _ = try store.lock.acquire(id) }
        store.rotate(to: servers.settings(prefix: "t8/"), redis: servers.redisSettings)
        let holding = try store.lock.acquire(id)
        #expect(try store.lock.run(["EXISTS", store.lock.key(id)]) == .integer(1))
        holding.release()
        #expect(try store.lock.run(["EXISTS", store.lock.key(id)]) == .integer(0))
    }
}
