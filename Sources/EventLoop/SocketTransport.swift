import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// What one read or write through a transport did.
enum TransportStatus: Equatable {
    /// `count` bytes moved (more than 0); `drained` when the kernel had no more to give or
    /// take (a short plain read), so another call now would only block.
    case moved(_ count: Int, drained: Bool)
    /// Nothing moved: the call can go on once the descriptor is readable or writable (TLS may
    /// need to read to write, and the other way round).
    case blocked(SocketReadiness)
    /// The peer closed its side (a FIN, or TLS's close_notify).
    case endOfFile
    /// The connection failed; `code` is the `errno` where there is one.
    case failed(code: Int32)
}

/// Which readiness a blocked transport waits for.
enum SocketReadiness: Equatable {
    case readable, writable
}

/// How bytes cross a connected socket: plain system calls, or TLS records through OpenSSL.
/// `BufferedSocket` owns the buffers and the events; a transport only moves bytes between the
/// descriptor and an `evbuffer`, so client and server TLS use the same socket code.
protocol SocketTransport: AnyObject {
    /// Whether bytes are TLS records.
    var isTLS: Bool { get }
    /// Whether the transport holds input already taken from the kernel (TLS records read
    /// ahead) that a read would return now: the read event will not fire for it. False when
    /// the last read blocked: part of a record waits for the socket, whose event will fire.
    var hasBufferedInput: Bool { get }
    /// The reason of the last TLS failure, if any.
    var failureDescription: String? { get }
    /// The protocol agreed in TLS's ALPN (`http/1.1`), if any.
    var applicationProtocol: String? { get }
    /// Whether the TLS handshake resumed an earlier session.
    var resumedSession: Bool { get }
    /// Binds the transport to the socket's descriptor, once it exists.
    func attach(_ fd: Int32) throws(EventLoopError)
    /// Starts or continues the handshake once connected: `.moved` when done.
    func handshake(_ fd: Int32) -> TransportStatus
    /// Appends at most `limit` bytes read from `fd` to `buffer`.
    func read(_ fd: Int32, into buffer: OpaquePointer, limit: Int) -> TransportStatus
    /// Sends at most `limit` bytes from the front of `buffer` and drains what was sent.
    func write(_ fd: Int32, from buffer: OpaquePointer, limit: Int) -> TransportStatus
    /// Ends the sending side cleanly (TLS: close_notify) before `shutdown(SHUT_WR)` or close.
    func finishSending(_ fd: Int32)
}

/// Plain TCP: `readv` straight into reserved buffer space, `writev` (or `sendfile` for file
/// segments) through `evbuffer_write_atmost`.
final class PlainTransport: SocketTransport {
    var isTLS: Bool { false }
    var hasBufferedInput: Bool { false }
    var failureDescription: String? { nil }
    var applicationProtocol: String? { nil }
    var resumedSession: Bool { false }

    func attach(_ fd: Int32) throws(EventLoopError) {}

    func handshake(_ fd: Int32) -> TransportStatus { .moved(0, drained: true) }

    /// The most chains one `readv` fills (libevent reserves the space in at most this many).
    static let readVectors = 4

    func read(_ fd: Int32, into buffer: OpaquePointer, limit: Int) -> TransportStatus {
        var vectors = (iovec(), iovec(), iovec(), iovec())
        return withUnsafeMutableBytes(of: &vectors) { raw in
            let vectors = raw.bindMemory(to: iovec.self)
            let reserved = evbuffer_reserve_space(buffer, limit, vectors.baseAddress, Int32(Self.readVectors))
            guard reserved >= 1 else { return .failed(code: ENOMEM) }
            // The chains may offer more than asked: read no more than `limit` (the watermark).
            var room = limit
            var offered: Int32 = 0
            for index in 0..<Int(reserved) where room > 0 {
                vectors[index].iov_len = min(vectors[index].iov_len, room)
                room -= vectors[index].iov_len
                offered += 1
            }
            var count: Int
            repeat {
                count = readv(fd, vectors.baseAddress, offered)
            } while count < 0 && errno == EINTR
            let code = errno
            // Commit what arrived, chain by chain; the rest of the reservation is given back.
            var left = max(count, 0)
            var used: Int32 = 0
            for index in 0..<Int(offered) where left > 0 {
                vectors[index].iov_len = min(vectors[index].iov_len, left)
                left -= vectors[index].iov_len
                used += 1
            }
            // Committing part of the reservation just made cannot fail.
            _ = evbuffer_commit_space(buffer, vectors.baseAddress, used)
            if count > 0 { return .moved(count, drained: count < limit) }
            if count == 0 { return .endOfFile }
            return code == EAGAIN || code == EWOULDBLOCK ? .blocked(.readable) : .failed(code: code)
        }
    }

    func write(_ fd: Int32, from buffer: OpaquePointer, limit: Int) -> TransportStatus {
        while true {
            let written = evbuffer_write_atmost(buffer, fd, limit)
            if written > 0 { return .moved(Int(written), drained: Int(written) < limit) }
            let code = errno
            if written < 0, code == EINTR { continue }
            if written < 0, code == EAGAIN || code == EWOULDBLOCK { return .blocked(.writable) }
            return .failed(code: written == 0 ? EPIPE : code)
        }
    }

    func finishSending(_ fd: Int32) {}
}
