import EventLoop
import ProxyCore

#if canImport(Glibc)
    import Glibc
#endif

/// Where an exchange's request body bytes go, as the exchange names the destination: the
/// upstream's output, the staging buffer, or a spool file for `request_body: buffer`. Chunk
/// framing is the exchange's (`FramedSink`); this only writes.
struct BodySink: RequestBodySink {
    unowned let io: ExchangeIO
    var destination = BodyDestination.staging

    init(_ io: ExchangeIO) {
        self.io = io
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        switch destination {
        case .upstream: io.upstream?.socket.output.add(bytes)
        case .staging: io.staging.buffer.add(bytes)
        case .spool: io.spool?.write(bytes)
        case .fileSpool: io.fileSpool?.write(bytes)
        }
    }

    mutating func openSpools(files: Bool) -> Bool {
        let directory = io.worker.config.tempDirectory
        do throws(ProxyError) {
            io.spool = try Spool(directory: directory)
            if files { io.fileSpool = try Spool(directory: directory) }
            return true
        } catch {
            return false
        }
    }

    mutating func flushSpools() -> Bool {
        (io.spool?.flush() ?? true) && (io.fileSpool?.flush() ?? true)
    }

    var spoolFailed: Bool {
        (io.spool?.error ?? 0) != 0 || (io.fileSpool?.error ?? 0) != 0
    }
}

/// An unlinked temp file that collects a re-encoded body so it can be sent with an exact
/// Content-Length. It has no name once created, so it disappears on every path, crashes
/// included; the descriptor is handed to libevent (`evbuffer_add_file`) or closed.
final class Spool {
    private(set) var descriptor: Int32
    private var pending: [UInt8] = []
    private(set) var size: Int64 = 0
    /// The first write error (`errno`), e.g. ENOSPC.
    private(set) var error: Int32 = 0

    init(directory: String) throws(ProxyError) {
        var template = Array("\(directory)/formgate-spool-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw ProxyError(.spoolFailed, detail: "cannot create a temp file in \(directory)")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        descriptor = fd
        pending.reserveCapacity(64 * 1024)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        guard error == 0 else { return }
        size += Int64(bytes.count)
        if pending.count + bytes.count > 64 * 1024 { flush() }
        if bytes.count >= 64 * 1024 {
            writeAll(bytes)
        } else {
            pending.append(contentsOf: bytes)
        }
    }

    /// Writes buffered bytes; returns false after a write error.
    @discardableResult
    func flush() -> Bool {
        if !pending.isEmpty {
            pending.withUnsafeBytes { writeAll($0) }
            pending.removeAll(keepingCapacity: true)
        }
        return error == 0
    }

    private func writeAll(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count, error == 0 {
            let result = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                error = errno
            } else {
                offset += result
            }
        }
    }

    /// Gives the descriptor away (to `evbuffer_add_file`, which closes it).
    func takeDescriptor() -> Int32 {
        let fd = descriptor
        descriptor = -1
        return fd
    }
}
