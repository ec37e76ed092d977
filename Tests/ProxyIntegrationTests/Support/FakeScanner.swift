import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A stand-in for clamd that misbehaves, on a Unix socket: it reads a whole `zINSTREAM` scan
/// (the command, the chunks, the zero length) and then answers `reply` and closes, or (`reply`
/// nil) never answers and keeps the connection open. With `held`, every reply waits until
/// `releaseReplies()`: scans the test can prove are waiting on their verdict.
final class FakeScanner: @unchecked Sendable {
    let path: String
    var address: String { "unix:" + path }
    private let listener: Int32
    private let reply: [UInt8]?
    private let lock = NSCondition()
    private var connections: [Int32] = []
    private var stopped = false
    private var listening = true
    private var held: Bool
    private var whole = 0

    init(reply: [UInt8]?, held: Bool = false) throws {
        path = NSTemporaryDirectory() + "formgate-fake-clamd-\(UUID().uuidString.prefix(8)).sock"
        self.reply = reply
        self.held = held
        listener = try unixListener(at: path, "fake scanner")
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    /// Scans read to their zero length so far (whether answered or not).
    var scansRead: Int { lock.withLock { whole } }

    /// Lets every held reply go, now and from now on.
    func releaseReplies() {
        lock.withLock {
            held = false
            lock.broadcast()
        }
    }

    /// Closes the listener but leaves its path: a connect is then refused (`ECONNREFUSED`), as
    /// at the socket of a clamd that died without removing it.
    func refuseConnections() {
        let open = lock.withLock {
            defer { listening = false }
            return listening && !stopped
        }
        guard open else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    func stop() {
        lock.lock()
        let open = stopped ? [] : connections + (listening ? [listener] : [])
        stopped = true
        held = false
        lock.broadcast()
        lock.unlock()
        for fd in open {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
        }
        unlink(path)
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            lock.lock()
            connections.append(fd)
            lock.unlock()
            Thread.detachNewThread { [self] in serve(fd) }
        }
    }

    /// Reads the scan to its zero length, then answers (or waits for the peer to go).
    private func serve(_ fd: Int32) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var commandRead = false
        var ended = false
        while !ended {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            pending += buffer[..<count]
            if !commandRead, let nul = pending.firstIndex(of: 0) {
                pending.removeSubrange(...nul)
                commandRead = true
            }
            while commandRead, pending.count >= 4 {
                let length = pending[..<4].reduce(0) { $0 << 8 | Int($1) }
                if length == 0 {
                    ended = true
                    break
                }
                guard pending.count >= 4 + length else { break }
                pending.removeSubrange(..<(4 + length))
            }
        }
        let answering = lock.withLock {
            whole += 1
            while held { lock.wait() }
            // Stopped while held: the descriptor is closed (and its number may be reused).
            return !stopped
        }
        guard answering else { return }
        guard let reply else {
            // Silent: hold the connection until the peer closes it.
            while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
            return
        }
        _ = reply.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        shutdown(fd, Int32(SHUT_WR))
    }
}

/// A listening Unix socket at `path` (the stand-ins' servers), or a `TestFailure` naming `who`.
func unixListener(at path: String, _ who: String) throws -> Int32 {
    let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard bound == 0, listen(listener, 64) == 0 else { throw TestFailure("\(who): errno \(errno)") }
    return listener
}

/// Reads CRLF-ended lines from a RESP text one after another (the fake and the real Redis's
/// test clients).
struct CRLFLines {
    let bytes: [UInt8]
    var index = 0

    /// The next line without its CRLF, or nil when it has not all arrived.
    mutating func line() -> String? {
        var end = index
        while end + 1 < bytes.count {
            if bytes[end] == 0x0D && bytes[end + 1] == 0x0A {
                let text = String(decoding: bytes[index..<end], as: UTF8.self)
                index = end + 2
                return text
            }
            end += 1
        }
        return nil
    }

    /// The next `count` bytes and their CRLF, or nil when they have not all arrived.
    mutating func bulk(_ count: Int) -> String? {
        guard index + count + 2 <= bytes.count else { return nil }
        let text = String(decoding: bytes[index..<index + count], as: UTF8.self)
        index += count + 2
        return text
    }
}
