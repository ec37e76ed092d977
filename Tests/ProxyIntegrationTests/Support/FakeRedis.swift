import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A stand-in for Redis that misbehaves, on a Unix socket: it answers the connection's setup
/// (`SCRIPT LOAD`) as Redis would, and every `EVALSHA` as `mode` says.
final class FakeRedis: @unchecked Sendable {
    enum Mode {
        /// Bytes that are not RESP.
        case garbage
        /// Half a reply, then the connection closes.
        case closeMidReply
        /// A well-formed answer carrying another request's nonce.
        case otherNonce
        /// Holds the first decision until a second arrives, then answers them in swapped order.
        case outOfOrder
        /// An error reply.
        case errorReply
    }

    let path: String
    var url: String { "unix:" + path }
    private let mode: Mode
    private let listener: Int32
    private let lock = NSLock()
    private var connections: [Int32] = []
    private var stopped = false
    private var decisions = 0

    init(_ mode: Mode) throws {
        self.mode = mode
        path = NSTemporaryDirectory() + "formgate-fake-redis-\(UUID().uuidString.prefix(8)).sock"
        listener = try unixListener(at: path, "fake redis")
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    /// `EVALSHA` commands read so far.
    var decisionsRead: Int { lock.withLock { decisions } }

    func stop() {
        let open = lock.withLock {
            defer { stopped = true }
            return stopped ? [] : connections + [listener]
        }
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
            let open = lock.withLock {
                connections.append(fd)
                return !stopped
            }
            guard open else { return }
            Thread.detachNewThread { [self] in serve(fd) }
        }
    }

    private func serve(_ fd: Int32) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        var held: String?
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            pending += buffer[..<count]
            while let (command, used) = Self.command(pending) {
                pending.removeFirst(used)
                guard let name = command.first?.uppercased() else { continue }
                if name == "SCRIPT" {
                    send(fd, "$40\r\n" + String(repeating: "0", count: 40) + "\r\n")
                    continue
                }
                guard name == "EVALSHA" || name == "EVAL" else {
                    send(fd, "+OK\r\n")
                    continue
                }
                lock.withLock { decisions += 1 }
                let nonce =
                    command.count > 3 + (Int(command[2]) ?? 0) ? command[3 + (Int(command[2]) ?? 0)] : ""
                switch mode {
                case .garbage:
                    send(fd, "?this is not RESP\r\n")
                case .closeMidReply:
                    send(fd, "*3\r\n$\(nonce.utf8.count)\r\n\(nonce)\r\n$2\r\no")
                    shutdown(fd, Int32(SHUT_RDWR))
                    return
                case .otherNonce:
                    send(fd, Self.answer("someone-else-1"))
                case .errorReply:
                    send(fd, "-ERR Error running script (call to f_0): @user_script:1: oom\r\n")
                case .outOfOrder:
                    if let first = held {
                        send(fd, Self.answer(nonce) + Self.answer(first))
                        held = nil
                    } else {
                        held = nonce
                    }
                }
            }
        }
    }

    private static func answer(_ nonce: String) -> String {
        "*3\r\n$\(nonce.utf8.count)\r\n\(nonce)\r\n$2\r\nok\r\n:0\r\n"
    }

    private func send(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    /// One whole command (an array of bulk strings) at the start of `bytes`, and its length.
    private static func command(_ bytes: [UInt8]) -> ([String], Int)? {
        var text = CRLFLines(bytes: bytes)
        guard let header = text.line(), header.hasPrefix("*"), let count = Int(header.dropFirst()) else {
            return nil
        }
        var items: [String] = []
        for _ in 0..<count {
            guard let size = text.line(), size.hasPrefix("$"), let length = Int(size.dropFirst()),
                let item = text.bulk(length)
            else { return nil }
            items.append(item)
        }
        return (items, text.index)
    }
}
