import Testing

@testable import Resumable

@Suite struct PatchSessionTests {
    func upload(_ store: DirectoryStore, length: Int64?) throws -> UploadInfo {
        let info = UploadInfo(id: UploadID.random(), length: length, createdAt: 0, expiresAt: 10)
        try store.create(info)
        return info
    }

    func write(_ session: PatchSession, _ text: String) throws {
        // The error is carried out of the closure: a typed-throws closure handed to
        // `withUnsafeBytes` crashed Swift 6.3.1's IR generation (a reabstraction thunk).
        var failure: PatchSession.WriteFailure?
        Array(text.utf8).withUnsafeBytes { bytes in
            do throws(PatchSession.WriteFailure) {
                try session.write(bytes)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    @Test func commitsWhatArrivedAndMovesTheExpiry() throws {
        let scratch = ScratchDirectory()
        defer { scratch.remove() }
        let store = try DirectoryStore(path: scratch.path)
        let info = try upload(store, length: 10)
        let session = try PatchSession(store: store, info: info, checksum: nil)
        try write(session, "hello")
        guard case .committed(let after) = try session.finish(bodyComplete: true, expiresAt: 99) else {
            Issue.record("not committed")
            return
        }
        #expect(after.offset == 5)
        #expect(after.expiresAt == 99)
        #expect(try store.info(info.id) == after)
        // Cut off mid-body, no checksum: what arrived is kept.
        let second = try PatchSession(store: store, info: after, checksum: nil)
        try write(second, "wor")
        guard case .committed(let cut) = try second.finish(bodyComplete: false, expiresAt: 100) else {
            Issue.record("not committed")
            return
        }
        #expect(cut.offset == 8)
        #expect(try store.read(info.id, at: 0, count: 20) == Array("hellowor".utf8))
    }

    @Test func refusesBytesPastTheLength() throws {
        let scratch = ScratchDirectory()
        defer { scratch.remove() }
        let store = try DirectoryStore(path: scratch.path)
        let info = try upload(store, length: 3)
        let session = try PatchSession(store: store, info: info, checksum: nil)
        #expect(throws: PatchSession.WriteFailure.pastLength) { try write(session, "abcd") }
        try session.abandon()
        #expect(try store.read(info.id, at: 0, count: 10) == [])
    }

    @Test func checksums() throws {
        let scratch = ScratchDirectory()
        defer { scratch.remove() }
        let store = try DirectoryStore(path: scratch.path)
        let info = try upload(store, length: nil)
        // The SHA-1 of "hello world".
        let (algorithm, digest) = try TusHeaders.checksum("sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0=")
        let checksum = TusRequest.Checksum(algorithm: algorithm, digest: digest)
        let wrong = try PatchSession(store: store, info: info, checksum: checksum)
        try write(wrong, "hello there")
        #expect(try wrong.finish(bodyComplete: true, expiresAt: 5) == .checksumMismatch)
        #expect(try store.info(info.id)?.offset == 0)
        #expect(try store.read(info.id, at: 0, count: 20) == [])
        // The right bytes, but cut off: cannot be verified, dropped.
        let cut = try PatchSession(store: store, info: info, checksum: checksum)
        try write(cut, "hello world")
        #expect(try cut.finish(bodyComplete: false, expiresAt: 5) == .checksumMismatch)
        let right = try PatchSession(store: store, info: info, checksum: checksum)
        try write(right, "hello ")
        try write(right, "world")
        guard case .committed(let after) = try right.finish(bodyComplete: true, expiresAt: 5) else {
            Issue.record("not committed")
            return
        }
        #expect(after.offset == 11)
        #expect(try store.read(info.id, at: 0, count: 20) == Array("hello world".utf8))
    }

    @Test func aRecordBehindItsBytesIsReportedNotPatched() throws {
        let scratch = ScratchDirectory()
        defer { scratch.remove() }
        let store = try DirectoryStore(path: scratch.path)
        var info = try upload(store, length: 10)
        info.offset = 4  // a record that says more than was stored
        #expect(throws: StoreError.self) { try PatchSession(store: store, info: info, checksum: nil) }
    }
}
