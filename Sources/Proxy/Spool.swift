import ProxyCore

#if canImport(Glibc)
    import Glibc
#endif

/// An unlinked temp file that collects a re-encoded body so it can be sent with an exact
/// Content-Length. It has no name once created, so it disappears on every path, crashes
/// included; the descriptor is handed to libevent (`evbuffer_add_file`) or closed.
///
/// The loop thread only copies bytes into a 64 KiB block and hands full blocks to the
/// worker's `SpoolWriter`, which writes them on its own thread; at most
/// `SpoolWriter.highMark` bytes (and one read's worth beyond) are in flight before
/// `backlogged` asks the exchange to pause its client. A spool dropped before it was sent
/// has its descriptor closed by the writer, after the writes queued before.
final class Spool {
    static let blockSize = 64 * 1024

    private let file: SpoolFile
    private let writer: SpoolWriter
    /// The block being filled (handed over when full, or by `flush()`).
    private var block: [UInt8] = []
    private var given = false
    /// Bytes written to the spool (in flight or on disk).
    private(set) var size: Int64 = 0

    init(directory: String, writer: SpoolWriter) throws(ProxyError) {
        var template = Array("\(directory)/formgate-spool-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw ProxyError(.spoolFailed, detail: "cannot create a temp file in \(directory)")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        file = SpoolFile(descriptor: fd)
        self.writer = writer
        block.reserveCapacity(Self.blockSize)
    }

    deinit {
        if !given { writer.close(file) }
    }

    /// The first write error (`errno`), e.g. ENOSPC; 0 while none.
    var error: Int32 {
        _ = file.inFlight.load(ordering: .acquiring)
        return file.error.load(ordering: .relaxed)
    }

    /// Whether so many bytes are in flight that the client should wait for the disk.
    var backlogged: Bool { file.inFlight.load(ordering: .acquiring) >= SpoolWriter.highMark }

    /// Copies `bytes` into blocks, handing each full one to the writer.
    func write(_ bytes: UnsafeRawBufferPointer) {
        guard error == 0 else { return }
        size += Int64(bytes.count)
        var rest = bytes
        while !rest.isEmpty {
            let count = min(rest.count, Self.blockSize - block.count)
            block.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest.prefix(count)))
            rest = UnsafeRawBufferPointer(rebasing: rest.dropFirst(count))
            if block.count == Self.blockSize { handOver() }
        }
    }

    /// Hands over the partial block; `.done` once every byte is on disk, `.pending` while
    /// writes are in flight (the writer signals when they land), `.failed` after an error.
    func flush() -> SpoolFlush {
        if !block.isEmpty, error == 0 { handOver() }
        let inFlight = file.inFlight.load(ordering: .acquiring)
        if file.error.load(ordering: .relaxed) != 0 { return .failed }
        return inFlight == 0 ? .done : .pending
    }

    private func handOver() {
        var full: [UInt8] = []
        full.reserveCapacity(Self.blockSize)
        swap(&full, &block)
        writer.write(full, to: file)
    }

    /// Gives the descriptor away (to `evbuffer_add_file`, which closes it); call once
    /// `flush()` is `.done`, when the writer holds nothing of the file.
    func takeDescriptor() -> Int32 {
        precondition(!given && file.inFlight.load(ordering: .acquiring) == 0, "spool taken while writing")
        given = true
        return file.descriptor
    }
}
