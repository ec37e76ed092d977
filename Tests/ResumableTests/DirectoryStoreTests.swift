import Testing

@testable import Resumable

#if canImport(Glibc)
    import Glibc
#endif

/// A fresh directory under /tmp, removed by `remove()`.
struct ScratchDirectory {
    let path: String

    init() {
        var template = Array("/tmp/formgate-tus-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)!) }
    }

    func remove() {
        guard let directory = opendir(path) else { return }
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { unlink("\(path)/\(name)") }
        }
        closedir(directory)
        rmdir(path)
    }

    func names() -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

@Suite struct DirectoryStoreTests {
    @Test func appendsCommitsAndReadsBack() throws {
        let scratch = ScratchDirectory()
        defer { scratch.remove() }
        let store = try DirectoryStore(path: scratch.path)
        let id = UploadID.random()
        var info = UploadInfo(id: id, length: 10, createdAt: 100, expiresAt: 200)
        try store.create(info)
        #expect(try store.info(id) == info)
        #expect(scratch.names() == ["\(id).bin", "\(id).info"])

        let writer = try store.open(id)
        try Array("hello".utf8).withUnsafeBytes { try writer.append($0) }
        try writer.sync()
        info.offset = writer.size
        try store.commit(info)
        try Array("wor".utf8).withUnsafeBytes { try writer.append($0) }
        writer.close()
        #expect(try store.info(id)?.offset == 5)
        // Reopened: the three bytes never committed are gone, appends continue at 5.
        let again = try store.open(id)
        #expect(again.size == 5)
        try Array("WORLD".utf8).withUnsafeBytes { try again.append($0) }
        try again.sync()
        info.offset = again.size
        try store.commit(info)
        again.close()
        #expect(try store.read(id, at: 0, count: 100) == Array("helloWORLD".utf8))
        #expect(try store.read(id, at: 3, count: 4) == Array("loWO".utf8))
        #expect(try store.info(id)?.isComplete == true)
    }

    @Test func checksumMismatchTruncatesBack() throws {
        let scratch = ScratchDirectory()
        defer { scratch.remove() }
        let store = try DirectoryStore(path: scratch.path)
        let id = UploadID.random()
        try store.create(UploadInfo(id: id, length: nil, createdAt: 1, expiresAt: 2))
        let writer = try store.open(id)
        try Array("abc".utf8).withUnsafeBytes { try writer.append($0) }
        try writer.truncate(to: 0)
        #expect(writer.size == 0)
        writer.close()
        #expect(try store.read(id, at: 0, count: 10) == [])
    }

    @Test func answersAreStoredAndDeletedWithTheUpload() throws {
        let scratch = ScratchDirectory()
        defer { scratch.remove() }
        let store = try DirectoryStore(path: scratch.path)
        let id = UploadID.random()
        try store.create(UploadInfo(id: id, length: 0, createdAt: 1, expiresAt: 2))
        #expect(try store.answer(id) == nil)
        let answer = StoredAnswer(
            status: 201, contentType: "application/json", body: Array("{\"ok\":1}\n\n".utf8))
        try store.storeAnswer(answer, for: id)
        #expect(try store.answer(id) == answer)
        try store.storeAnswer(StoredAnswer(status: 502, contentType: nil, body: []), for: id)
        #expect(try store.answer(id) == StoredAnswer(status: 502, contentType: nil, body: []))
        try store.delete(id)
        #expect(try store.info(id) == nil)
        #expect(scratch.names().isEmpty)
        try store.delete(id)  // twice: nothing left, no error
    }

    @Test func expiryFindsOldAndUnreadableRecords() throws {
        let scratch = ScratchDirectory()
        defer { scratch.remove() }
        let store = try DirectoryStore(path: scratch.path)
        let old = UploadID.random()
        let fresh = UploadID.random()
        let broken = UploadID.random()
        try store.create(UploadInfo(id: old, length: 1, createdAt: 1, expiresAt: 50))
        try store.create(UploadInfo(id: fresh, length: 1, createdAt: 1, expiresAt: 500))
        let fd = open("\(scratch.path)/\(broken).info", O_WRONLY | O_CREAT, 0o600)
        _ = write(fd, "junk", 4)
        close(fd)
        #expect(throws: StoreError.self) { try store.info(broken) }
        #expect(Set(try store.expired(at: 100)) == [old, broken])
        #expect(Set(try store.expired(at: 1000)) == [old, fresh, broken])
    }

    @Test func refusesAFileWhereTheDirectoryShouldBe() throws {
        let scratch = ScratchDirectory()
        defer { scratch.remove() }
        let fd = open("\(scratch.path)/file", O_WRONLY | O_CREAT, 0o600)
        close(fd)
        #expect(throws: StoreError.self) { try DirectoryStore(path: "\(scratch.path)/file") }
    }
}
