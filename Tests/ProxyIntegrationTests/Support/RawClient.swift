import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP client for sending exact bytes (framing cases, aborted uploads, pipelining).
final class RawClient: @unchecked Sendable {
    let fd: Int32
    /// Bytes received past the last response read (pipelined responses arrive together).
    private var pending: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw TestFailure("connect failed: \(errno)") }
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit {
        close(fd)
    }

    func send(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent <= 0 { return }
            offset += sent
        }
    }

    func send(_ text: String) {
        send(Array(text.utf8))
    }

    /// Reads until the peer closes or `timeout` seconds pass.
    func readAll(timeout: Int = 30) -> [UInt8] {
        var timeoutValue = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeoutValue, socklen_t(MemoryLayout<timeval>.size))
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            out += buffer[..<count]
        }
        return out
    }

    /// Reads until `done` holds for what arrived, the peer closes, or `timeout` seconds pass
    /// (a deadline for a test that would hang, not a measure).
    func read(timeout: Int = 30, until done: ([UInt8]) -> Bool) -> [UInt8] {
        var timeoutValue = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeoutValue, socklen_t(MemoryLayout<timeval>.size))
        var out = pending
        pending = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !done(out) {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            out += buffer[..<count]
        }
        return out
    }

    /// Whether bytes are waiting to be read (or the peer closed), without blocking.
    var hasInput: Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        return count >= 0
    }

    /// Reads one HTTP/1.1 response with a Content-Length body (or until close); bytes past it
    /// are kept for the next call.
    func readResponse(timeout: Int = 30) -> (status: Int, head: String, body: [UInt8])? {
        var timeoutValue = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeoutValue, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 65536)
        func fill() -> Bool {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return false }
            pending += buffer[..<count]
            return true
        }
        while true {
            if let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) {
                let head = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
                let status = Int(head.split(separator: " ").dropFirst().first ?? "") ?? 0
                if (100..<200).contains(status) {
                    pending.removeSubrange(..<end.upperBound)
                    continue
                }
                let length = head.split(separator: "\r\n").first {
                    $0.lowercased().hasPrefix("content-length:")
                }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
                guard let length else {
                    while fill() {}
                    let body = Array(pending[end.upperBound...])
                    pending.removeAll()
                    return (status, head, body)
                }
                while pending.count - end.upperBound < length {
                    if !fill() { break }
                }
                let bodyEnd = min(pending.count, end.upperBound + length)
                let body = Array(pending[end.upperBound..<bodyEnd])
                pending.removeSubrange(..<bodyEnd)
                return (status, head, body)
            }
            if !fill() { return nil }
        }
    }

    func shutdownWrite() {
        shutdown(fd, Int32(SHUT_WR))
    }
}

/// A TCP listener that records what it receives and answers as told (or never): a fake
/// upstream for fault and smuggling tests.
final class FakeUpstream: @unchecked Sendable {
    enum Behavior {
        /// Accept and read, never answer.
        case silent
        /// Read a little, then reset the connection.
        case resetAfter(bytes: Int)
        /// Answer every request with this raw response after reading its head.
        case respond(String)
        /// Answer the first request, then close the connection.
        case respondAndClose(String)
        /// Read at most this many bytes per second, never answer.
        case slowRead(bytesPerSecond: Int)
        /// After a request head, shut down the sending side (FIN, no response) and keep reading.
        case halfCloseAfterHead
        /// Answer each request this many seconds after its head arrived.
        case respondAfter(seconds: Double, String)
        /// Answer each request once all of it arrived (its Content-Length, or its last chunk),
        /// keeping the connection: a reply the proxy relays means the upstream has the request.
        case answer(String)
    }

    /// The length of the first whole request in `bytes` (head and body by its framing), or nil
    /// while it is still arriving.
    static func wholeRequestLength(_ bytes: [UInt8]) -> Int? {
        var cursor: RequestCursor?
        return wholeLength(bytes, &cursor)
    }

    /// `wholeRequestLength`, resumable: `cursor` carries what is known between calls on a
    /// growing buffer (the Content-Length request's end, or the next chunk's size line), so a
    /// large body is not searched again on every read. Searches are bounded (a head within
    /// 64 KiB, a size line within 1 KiB): a search over the rest of a large buffer per chunk
    /// made this quadratic.
    static func wholeLength(_ pending: [UInt8], _ cursor: inout RequestCursor?) -> Int? {
        if cursor == nil {
            guard let end = pending.prefix(65536).firstRange(of: Array("\r\n\r\n".utf8))?.upperBound else {
                return nil
            }
            let head = ForwardedRequest(Array(pending[..<end]))
            cursor = head.chunked ? .chunk(at: end) : .end(end + (head.contentLength ?? 0))
        }
        while true {
            switch cursor! {
            case .end(let length):
                return pending.count >= length ? length : nil
            case .chunk(let index):
                guard index < pending.count,
                    let lineEnd = pending[index...].prefix(1024).firstRange(of: Array("\r\n".utf8))
                else { return nil }
                let sizeText = String(decoding: pending[index..<lineEnd.lowerBound], as: UTF8.self)
                guard let size = Int(sizeText.prefix { $0 != ";" }, radix: 16) else { return nil }
                // The last chunk: the request ends after it and an empty trailer.
                cursor = size == 0 ? .end(lineEnd.upperBound + 2) : .chunk(at: lineEnd.upperBound + size + 2)
            }
        }
    }

    /// Where `wholeLength` stands in a request.
    enum RequestCursor {
        /// The request ends at this length.
        case end(Int)
        /// The next chunk's size line starts here.
        case chunk(at: Int)
    }

    let fd: Int32
    let port: Int
    private let lock = NSLock()
    private var received: [UInt8] = []
    /// What each accepted connection received, in accept order.
    private var perConnection: [[UInt8]] = []
    /// Whether each accepted connection was closed (or reset) by the peer, in accept order.
    private var perConnectionClosed: [Bool] = []
    private var closedCount = 0
    private let behavior: Behavior
    private var running = true

    init(_ behavior: Behavior) throws {
        self.behavior = behavior
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        listen(listener, 128)
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        fd = listener
        port = Int(UInt16(bigEndian: bound.sin_port))
        let thread = Thread { [unowned self] in self.acceptLoop() }
        thread.start()
    }

    var url: String { "http://127.0.0.1:\(port)" }
    var bytesReceived: [UInt8] { lock.withLock { received } }
    /// What arrived after the first `offset` bytes, on whichever connections (a pooled one
    /// carries a request on the previous one's stream).
    func received(since offset: Int) -> String {
        lock.withLock { String(decoding: received.dropFirst(offset), as: UTF8.self) }
    }
    /// How many bytes arrived, without copying them.
    var byteCount: Int { lock.withLock { received.count } }
    var connections: Int { lock.withLock { perConnection.count } }
    /// What each connection received so far, in accept order.
    var streams: [[UInt8]] { lock.withLock { perConnection } }
    /// What each connection received so far and whether the peer closed it, in accept order.
    var connectionRecords: [(bytes: [UInt8], closed: Bool)] {
        lock.withLock { Array(zip(perConnection, perConnectionClosed)).map { ($0, $1) } }
    }
    /// Accepted connections that the peer has not closed (or reset) yet.
    var openConnections: Int { lock.withLock { perConnection.count - closedCount } }

    private func acceptLoop() {
        while lock.withLock({ running }) {
            let client = accept(fd, nil, nil)
            if client < 0 { return }
            let index = lock.withLock {
                perConnection.append([])
                perConnectionClosed.append(false)
                return perConnection.count - 1
            }
            Thread { [unowned self] in self.serve(client, index: index) }.start()
        }
    }

    private func serve(_ client: Int32, index: Int) {
        defer {
            close(client)
            lock.withLock {
                closedCount += 1
                perConnectionClosed[index] = true
            }
        }
        var buffer = [UInt8](repeating: 0, count: 65536)
        var seen = 0
        var pending: [UInt8] = []
        // Where the pending request stands (`wholeLength`).
        var cursor: RequestCursor?
        while true {
            if case .slowRead(let rate) = behavior {
                if buffer.count < rate / 10 { buffer = [UInt8](repeating: 0, count: rate / 10) }
                let count = recv(client, &buffer, rate / 10, Int32(MSG_WAITALL))
                if count <= 0 { return }
                lock.withLock {
                    received += buffer[..<count]
                    perConnection[index] += buffer[..<count]
                }
                Thread.sleep(forTimeInterval: 0.1)
                continue
            }
            let count = recv(client, &buffer, buffer.count, 0)
            if count <= 0 { return }
            lock.withLock {
                received += buffer[..<count]
                perConnection[index] += buffer[..<count]
            }
            seen += count
            pending += buffer[..<count]
            switch behavior {
            case .silent, .slowRead:
                continue
            case .halfCloseAfterHead:
                if pending.firstRange(of: Array("\r\n\r\n".utf8)) != nil {
                    pending = []
                    shutdown(client, Int32(SHUT_WR))
                }
            case .resetAfter(let bytes):
                if seen >= bytes {
                    var linger = linger(l_onoff: 1, l_linger: 0)
                    setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<linger>.size))
                    return
                }
            case .respond(let response), .respondAfter(_, let response):
                while let end = pending.firstRange(of: Array("\r\n\r\n".utf8)) {
                    pending.removeSubrange(..<end.upperBound)
                    if case .respondAfter(let seconds, _) = behavior {
                        Thread.sleep(forTimeInterval: seconds)
                    }
                    _ = Array(response.utf8).withUnsafeBytes {
                        Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                    }
                }
            case .answer(let response):
                while let length = Self.wholeLength(pending, &cursor) {
                    pending.removeSubrange(..<length)
                    cursor = nil
                    _ = Array(response.utf8).withUnsafeBytes {
                        Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                    }
                }
            case .respondAndClose(let response):
                if pending.firstRange(of: Array("\r\n\r\n".utf8)) != nil {
                    _ = Array(response.utf8).withUnsafeBytes {
                        Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                    }
                    return
                }
            }
        }
    }

    /// Stops accepting and closes the listener, once (a second close could hit a reused
    /// descriptor).
    func stop() {
        let wasRunning = lock.withLock {
            defer { running = false }
            return running
        }
        guard wasRunning else { return }
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
    }

    deinit {
        stop()
    }
}
