import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Debian's redis-server, started on a free loopback port with persistence off, in a temp
/// directory; stopped by PID when released. `stop()` and `start()` take it away and bring it
/// back on the same port (a Redis outage); `freeze()` sends SIGSTOP (the kernel still accepts
/// connections, nothing answers) and `thaw()` SIGCONT.
final class RedisServer: @unchecked Sendable {
    let port: Int
    let directory: String
    /// `requirepass`, when the test set one.
    let password: String?
    private var server: ServerProcess?

    /// `redis://127.0.0.1:PORT/0` (with the password when there is one).
    var url: String {
        if let password { return "redis://:\(password)@127.0.0.1:\(port)/0" }
        return "redis://127.0.0.1:\(port)/0"
    }

    init(password: String? = nil) throws {
        port = try freePort()
        self.password = password
        directory = NSTemporaryDirectory() + "formgate-redis-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Starts redis-server and waits until it answers PING.
    func start() throws {
        var arguments = [
            "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir",
            directory,
            "--daemonize", "no", "--logfile", "",
        ]
        if let password { arguments += ["--requirepass", password] }
        server = try ServerProcess("/usr/bin/redis-server", arguments, waitForListening: false)
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if (try? command(["PING"])) == "+PONG" { return }
            guard server?.process.isRunning == true else { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw TestFailure("redis-server did not start: \(server?.stderr ?? "") \(server?.stdout ?? "")")
    }

    /// Stops it (its port then refuses connections).
    func stop() {
        if let server, !server.process.isRunning || kill(server.pid, SIGCONT) == 0 { server.stop() }
        server = nil
    }

    /// SIGSTOP: connections are still accepted by the kernel, nothing is answered.
    func freeze() { if let server { kill(server.pid, SIGSTOP) } }

    /// SIGCONT after `freeze()`.
    func thaw() { if let server { kill(server.pid, SIGCONT) } }

    /// Sends one command on a new connection (AUTH first when there is a password) and returns
    /// the reply's first line, or for a bulk string its content (`nil` bulk: "(nil)"); arrays
    /// are returned as their raw text.
    @discardableResult
    func command(_ arguments: [String]) throws -> String {
        let fd = try connect()
        defer { close(fd) }
        var request = ""
        var commands = [arguments]
        if let password { commands.insert(["AUTH", password], at: 0) }
        for command in commands {
            request += "*\(command.count)\r\n"
            for argument in command { request += "$\(argument.utf8.count)\r\n\(argument)\r\n" }
        }
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
            throw TestFailure("write to redis failed")
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            if let reply = Self.lastReply(received, after: commands.count - 1) { return reply }
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { throw TestFailure("redis closed the connection") }
            received += buffer[0..<count]
        }
    }

    private func connect() throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard connected else {
            close(fd)
            throw TestFailure("connect to redis: errno \(errno)")
        }
        return fd
    }

    /// The reply after skipping `skip` replies, once complete (simple replies and bulk strings
    /// are parsed; an array is returned as the text up to the end of what arrived once its
    /// element count of lines is there).
    private static func lastReply(_ bytes: [UInt8], after skip: Int) -> String? {
        var text = CRLFLines(bytes: bytes)
        var seen = 0
        func reply() -> String? {
            guard let first = text.line() else { return nil }
            switch first.first {
            case "$":
                let length = Int(first.dropFirst()) ?? -1
                return length < 0 ? "(nil)" : text.bulk(length)
            case "*":
                let count = Int(first.dropFirst()) ?? -1
                var items: [String] = []
                for _ in 0..<max(0, count) {
                    guard let item = reply() else { return nil }
                    items.append(item)
                }
                return items.joined(separator: "\n")
            default:
                return first
            }
        }
        while true {
            guard let text = reply() else { return nil }
            if seen == skip { return text }
            seen += 1
        }
    }
}
