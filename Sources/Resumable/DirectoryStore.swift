#if canImport(Glibc)
    import Glibc
#endif

/// The embedded store: a directory with, per upload, `<id>.info` (the record), `<id>.bin` (the
/// bytes) and, once delivered, `<id>.answer`.
///
/// A record is replaced atomically (written to `<id>.info.tmp`, synced, renamed over the old
/// one, the directory synced), so after `kill -9` or a power cut at any instant it is the old
/// record or the new one, never a mix. Bytes are synced before the record that counts them.
public final class DirectoryStore: UploadStore, @unchecked Sendable {
    /// The directory.
    public let path: String
    // Immutable after init; every call works on its own descriptors.

    /// A store in `path`, created (mode 0700) when missing.
    public init(path: String) throws(StoreError) {
        self.path = path
        if mkdir(path, 0o700) != 0, errno != EEXIST { throw Self.failure("mkdir", errno) }
        var status = stat()
        guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw .io("stat \(path): not a directory", ENOTDIR)
        }
    }

    /// Why a store could not live in `path` (for `formgate check`, which creates nothing): it
    /// is not a directory, or it (or, when missing, its parent) is not writable by this
    /// process. nil when it could.
    public static func problem(path: String) -> String? {
        var status = stat()
        if stat(path, &status) == 0 {
            guard status.st_mode & S_IFMT == S_IFDIR else { return "\(path) is not a directory" }
            return access(path, W_OK | X_OK) == 0 ? nil : "\(path) is not writable"
        }
        guard errno == ENOENT else { return "\(path): \(String(cString: strerror(errno)))" }
        let parent = path.hasPrefix("/") ? String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)]) : "."
        let directory = parent.isEmpty ? "/" : parent
        return access(directory, W_OK | X_OK) == 0
            ? nil : "\(path) does not exist and \(directory) is not writable to create it"
    }

    private func file(_ id: UploadID, _ suffix: String) -> String { "\(path)/\(id.hex).\(suffix)" }

    static func failure(_ call: String, _ code: Int32) -> StoreError {
        code == ENOSPC || code == EDQUOT ? .full : .io(call, code)
    }

    public func create(_ info: UploadInfo) throws(StoreError) {
        let fd = Glibc.open(file(info.id, "bin"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure("open bin", errno) }
        let synced = fsync(fd)
        let code = errno
        Glibc.close(fd)
        guard synced == 0 else {
            unlink(file(info.id, "bin"))
            throw Self.failure("fsync bin", code)
        }
        do {
            try commit(info)
        } catch {
            // No record, no bytes: a creation that failed leaves nothing behind.
            unlink(file(info.id, "bin"))
            throw error
        }
    }

    public func info(_ id: UploadID) throws(StoreError) -> UploadInfo? {
        guard let bytes = try readWhole(file(id, "info")) else { return nil }
        do {
            return try UploadInfo.decode(bytes)
        } catch {
            throw .corrupt(id, error.reason)
        }
    }

    public func open(_ id: UploadID) throws(StoreError) -> any UploadWriter {
        guard let info = try info(id) else { throw .io("open: no upload \(id)", ENOENT) }
        let fd = Glibc.open(file(id, "bin"), O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure("open bin", errno) }
        let writer = FileWriter(fd: fd, size: info.offset)
        // Bytes written past the recorded offset were never acknowledged: drop them.
        do {
            try writer.truncate(to: info.offset)
        } catch {
            writer.close()
            throw error
        }
        return writer
    }

    public func commit(_ info: UploadInfo) throws(StoreError) {
        try writeAtomically(file(info.id, "info"), info.encoded)
    }

    public func read(_ id: UploadID, at offset: Int64, count: Int) throws(StoreError) -> [UInt8] {
        let fd = Glibc.open(file(id, "bin"), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure("open bin", errno) }
        defer { Glibc.close(fd) }
        var code: Int32 = 0
        // Filled by pread, never zeroed first.
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = 0
            while initialized < count {
                let got = pread(
                    fd, buffer.baseAddress! + initialized, count - initialized,
                    off_t(offset) + off_t(initialized))
                if got < 0, errno == EINTR { continue }
                if got < 0 { code = errno }
                if got <= 0 { break }
                initialized += got
            }
        }
        guard code == 0 else { throw Self.failure("pread", code) }
        return bytes
    }

    public func readDescriptor(_ id: UploadID) throws(StoreError) -> Int32? {
        let fd = Glibc.open(file(id, "bin"), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure("open bin", errno) }
        return fd
    }

    public func answer(_ id: UploadID) throws(StoreError) -> StoredAnswer? {
        guard let bytes = try readWhole(file(id, "answer")) else { return nil }
        guard let answer = StoredAnswer.decode(bytes) else { throw .corrupt(id, "bad answer") }
        return answer
    }

    public func storeAnswer(_ answer: StoredAnswer, for id: UploadID) throws(StoreError) {
        try writeAtomically(file(id, "answer"), answer.encoded)
    }

    public func delete(_ id: UploadID) throws(StoreError) {
        for suffix in ["info", "answer", "bin", "info.tmp", "answer.tmp"] {
            if unlink(file(id, suffix)) != 0, errno != ENOENT {
                throw Self.failure("unlink \(suffix)", errno)
            }
            if suffix == "info" { try syncDirectory() }
        }
    }

    public func expired(at unixSeconds: Int64) throws(StoreError) -> [UploadID] {
        guard let directory = opendir(path) else { throw Self.failure("opendir", errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name.hasSuffix(".info") { names.append(String(name.dropLast(".info".count))) }
        }
        var found: [UploadID] = []
        for name in names {
            guard let id = UploadID(name) else { continue }
            // A record that cannot be read has no expiry to honour: it is reported as expired,
            // so the timer removes what can never be resumed.
            let info = try? info(id)
            if info.map({ $0.expiresAt <= unixSeconds }) ?? true { found.append(id) }
        }
        return found
    }

    // MARK: Files

    private func readWhole(_ name: String) throws(StoreError) -> [UInt8]? {
        let fd = Glibc.open(name, O_RDONLY | O_CLOEXEC)
        if fd < 0, errno == ENOENT { return nil }
        guard fd >= 0 else { throw Self.failure("open", errno) }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let got = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw Self.failure("read", errno) }
            if got == 0 { return bytes }
            bytes += chunk[..<got]
            guard bytes.count <= 1 << 24 else { throw .io("read \(name): larger than 16 MiB", EFBIG) }
        }
    }

    private func writeAtomically(_ name: String, _ bytes: [UInt8]) throws(StoreError) {
        let temporary = name + ".tmp"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure("open tmp", errno) }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes {
                Glibc.write(fd, $0.baseAddress! + written, $0.count - written)
            }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else {
                let code = errno
                Glibc.close(fd)
                unlink(temporary)
                throw Self.failure("write tmp", code)
            }
            written += result
        }
        let synced = fsync(fd)
        let code = errno
        Glibc.close(fd)
        guard synced == 0 else {
            unlink(temporary)
            throw Self.failure("fsync tmp", code)
        }
        guard rename(temporary, name) == 0 else { throw Self.failure("rename", errno) }
        try syncDirectory()
    }

    private func syncDirectory() throws(StoreError) {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.failure("open dir", errno) }
        defer { Glibc.close(fd) }
        guard fsync(fd) == 0 else { throw Self.failure("fsync dir", errno) }
    }
}

/// Appends to `<id>.bin` with `pwrite` at the known size (no file position shared with anyone).
final class FileWriter: UploadWriter {
    private var fd: Int32
    private(set) var size: Int64

    init(fd: Int32, size: Int64) {
        self.fd = fd
        self.size = size
    }

    deinit { close() }

    func append(_ bytes: UnsafeRawBufferPointer) throws(StoreError) {
        var written = 0
        while written < bytes.count {
            let result = pwrite(fd, bytes.baseAddress! + written, bytes.count - written, off_t(size))
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { throw DirectoryStore.failure("pwrite", errno) }
            written += result
            size += Int64(result)
        }
    }

    func sync() throws(StoreError) {
        guard fdatasync(fd) == 0 else { throw DirectoryStore.failure("fdatasync", errno) }
    }

    func truncate(to size: Int64) throws(StoreError) {
        guard ftruncate(fd, off_t(size)) == 0 else { throw DirectoryStore.failure("ftruncate", errno) }
        self.size = size
    }

    func close() {
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }
}
