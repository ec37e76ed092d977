import HTTP1
import HTTPCore

#if canImport(Glibc)
    import Glibc
#endif

/// One keep-alive HTTP/1.1 connection to the collector, used by the exporter's thread only:
/// blocking I/O, every step (name lookup aside) bounded by the attempt's deadline (`poll`
/// before each read and write on a non-blocking socket). The response is read by the shared
/// `ResponseHeadReader` and `BodyDecoder`, its body discarded.
final class OTLPConnection {
    /// What one `post` came to.
    enum Outcome: Equatable {
        /// The collector answered; `retryAfter` is its `Retry-After` value, if any.
        case answered(status: Int, retryAfter: String?)
        /// No answer. `stale` when a reused connection failed before any byte of an answer
        /// came (the collector closed it while idle): worth one retry at once.
        case failed(String, stale: Bool)
    }

    let endpoint: OTLPEndpoint
    private let userAgent: String
    private var socket: Int32 = -1
    private let input = ReceiveBuffer()
    /// Where `recv` writes (64 KiB, allocated once).
    private var scratch = [UInt8](repeating: 0, count: 64 * 1024)
    /// The largest response head read, and the most body bytes read and discarded.
    static let maxHead = 16 * 1024
    static let maxBody = 1 << 20

    init(endpoint: OTLPEndpoint, userAgent: String) {
        self.endpoint = endpoint
        self.userAgent = userAgent
    }

    deinit { close() }

    /// POSTs `body` as `application/json` to the endpoint's path; connects first if no
    /// connection is open. Closes the connection on any failure and when the answer says so.
    func post(_ body: [UInt8], deadline: UInt64) -> Outcome {
        let reused = socket >= 0
        if !reused, let failure = connect(deadline: deadline) { return .failed(failure, stale: false) }
        var request = Array(
            "POST \(endpoint.path) HTTP/1.1\r\nHost: \(endpoint.hostField)\r\nUser-Agent: \(userAgent)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
                .utf8)
        request.append(contentsOf: body)
        if let failure = send(request, deadline: deadline) {
            close()
            return .failed(failure, stale: reused)
        }
        switch readResponse(deadline: deadline) {
        case .success(let answer):
            return answer
        case .failure(let failure):
            let stale = reused && failure.beforeAnswer
            close()
            return .failed(failure.message, stale: stale)
        }
    }

    func close() {
        if socket >= 0 {
            Glibc.close(socket)
            socket = -1
        }
        input.reset()
    }

    // MARK: Connecting

    /// Opens the connection (each address in `getaddrinfo`'s order); nil on success, else why not.
    private func connect(deadline: UInt64) -> String? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(endpoint.host, String(endpoint.port), &hints, &list)
        guard status == 0, let list else {
            return "cannot resolve \(endpoint.host): \(String(cString: gai_strerror(status)))"
        }
        defer { freeaddrinfo(list) }
        var failure = "connect \(endpoint.hostField): no address"
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            entry = current.pointee.ai_next
            let flags = Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
            let descriptor = Glibc.socket(current.pointee.ai_family, current.pointee.ai_socktype | flags, 0)
            guard descriptor >= 0 else {
                failure = "socket: \(String(cString: strerror(errno)))"
                continue
            }
            if let problem = Self.connect(descriptor, current.pointee, deadline: deadline) {
                Glibc.close(descriptor)
                failure = "connect \(endpoint.hostField): \(problem)"
                continue
            }
            var one: Int32 = 1
            setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            socket = descriptor
            return nil
        }
        return failure
    }

    private static func connect(_ descriptor: Int32, _ address: addrinfo, deadline: UInt64) -> String? {
        if Glibc.connect(descriptor, address.ai_addr, address.ai_addrlen) == 0 { return nil }
        guard errno == EINPROGRESS else { return String(cString: strerror(errno)) }
        guard wait(descriptor, for: Int16(POLLOUT), deadline: deadline) else { return "timed out" }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &error, &length) == 0 else {
            return String(cString: strerror(errno))
        }
        return error == 0 ? nil : String(cString: strerror(error))
    }

    /// Waits until `descriptor` is ready for `events` or the deadline passes (false).
    private static func wait(_ descriptor: Int32, for events: Int16, deadline: UInt64) -> Bool {
        while true {
            let now = WallClock.monotonicNano()
            guard now < deadline else { return false }
            let milliseconds = Int32(min((deadline - now + 999_999) / 1_000_000, UInt64(Int32.max)))
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let ready = poll(&entry, 1, milliseconds)
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return true }  // the next call reports the error
        }
    }

    // MARK: Sending and receiving

    /// Writes all of `bytes`; nil on success, else why not.
    private func send(_ bytes: [UInt8], deadline: UInt64) -> String? {
        var sent = 0
        while sent < bytes.count {
            let result = bytes.withUnsafeBytes { raw in
                Glibc.send(socket, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
            }
            if result > 0 {
                sent += result
            } else if result < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                guard Self.wait(socket, for: Int16(POLLOUT), deadline: deadline) else {
                    return "send to \(endpoint.hostField): timed out"
                }
            } else {
                return
                    "send to \(endpoint.hostField): \(String(cString: strerror(result == 0 ? EPIPE : errno)))"
            }
        }
        return nil
    }

    /// Why reading an answer failed, and whether any byte of it had come.
    private struct ReadFailure: Error {
        var message: String
        var beforeAnswer: Bool
    }

    /// Reads more bytes into `input`: false at the end of the stream.
    private func fill(deadline: UInt64) -> Result<Bool, ReadFailure> {
        while true {
            let result = scratch.withUnsafeMutableBytes { raw in recv(socket, raw.baseAddress, raw.count, 0) }
            if result > 0 {
                scratch.withUnsafeBytes { input.append(UnsafeRawBufferPointer(rebasing: $0[..<result])) }
                return .success(true)
            }
            if result == 0 { return .success(false) }
            guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
                return .failure(ReadFailure(message: String(cString: strerror(errno)), beforeAnswer: false))
            }
            guard Self.wait(socket, for: Int16(POLLIN), deadline: deadline) else {
                return .failure(ReadFailure(message: "timed out", beforeAnswer: false))
            }
        }
    }

    /// Reads one answer: its head, then its body (discarded).
    private func readResponse(deadline: UInt64) -> Result<Outcome, ReadFailure> {
        let head: ResponseHead
        switch readHead(deadline: deadline) {
        case .success(let (answer, framing)):
            head = answer
            if let failure = skipBody(framing, deadline: deadline) { return .failure(failure) }
        case .failure(let failure):
            return .failure(failure)
        }
        if !head.keepAlive { close() }
        let retryAfter = head.headers.firstValue("Retry-After").map { String(decoding: $0, as: UTF8.self) }
        return .success(.answered(status: head.status, retryAfter: retryAfter))
    }

    /// Reads the final response head (1xx heads skipped) and its body's framing.
    private func readHead(deadline: UInt64) -> Result<(ResponseHead, BodyFraming), ReadFailure> {
        let place = "answer from \(endpoint.hostField)"
        var reader = ResponseHeadReader(limit: Self.maxHead)
        var received = false
        while true {
            do throws(HTTP1Error) {
                if let (head, framing) = try reader.read(from: input, requestMethod: "POST") {
                    return .success((head, framing))
                }
            } catch {
                return .failure(ReadFailure(message: "\(place): \(error)", beforeAnswer: false))
            }
            switch fill(deadline: deadline) {
            case .success(true):
                received = true
            case .success(false):
                return .failure(ReadFailure(message: "\(place): connection closed", beforeAnswer: !received))
            case .failure(let failure):
                return .failure(ReadFailure(message: "\(place): \(failure.message)", beforeAnswer: !received))
            }
        }
    }

    /// Reads and drops the body framed by `framing` (at most `maxBody` bytes); nil once it is
    /// read. A body that ends with the connection closes it.
    private func skipBody(_ framing: BodyFraming, deadline: UInt64) -> ReadFailure? {
        let place = "answer from \(endpoint.hostField)"
        var decoder = BodyDecoder(framing)
        while true {
            do throws(HTTP1Error) {
                if try input.decodeBody(&decoder, { _ in }) { return nil }
            } catch {
                return ReadFailure(message: "\(place): \(error)", beforeAnswer: false)
            }
            guard decoder.payloadBytes <= Self.maxBody else {
                return ReadFailure(message: "\(place): body over 1 MiB", beforeAnswer: false)
            }
            switch fill(deadline: deadline) {
            case .success(true):
                continue
            case .success(false) where decoder.endsAtClose:
                close()
                return nil
            case .success(false):
                return ReadFailure(message: "\(place): body cut short", beforeAnswer: false)
            case .failure(let failure):
                return ReadFailure(message: "\(place): \(failure.message)", beforeAnswer: false)
            }
        }
    }
}
