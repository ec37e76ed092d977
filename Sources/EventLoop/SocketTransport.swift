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
    /// Whether the transport holds input already taken from the kernel (decrypted TLS
    /// records): the read event will not fire for it.
    var hasBufferedInput: Bool { get }
    /// The reason of the last TLS failure, if any.
    var failureDescription: String? { get }
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

/// Plain TCP: `recv` straight into reserved buffer space, `writev` (or `sendfile` for file
/// segments) through `evbuffer_write_atmost`.
final class PlainTransport: SocketTransport {
    var isTLS: Bool { false }
    var hasBufferedInput: Bool { false }
    var failureDescription: String? { nil }

    func attach(_ fd: Int32) throws(EventLoopError) {}

    func handshake(_ fd: Int32) -> TransportStatus { .moved(0, drained: true) }

    func read(_ fd: Int32, into buffer: OpaquePointer, limit: Int) -> TransportStatus {
        var vector = iovec()
        guard evbuffer_reserve_space(buffer, limit, &vector, 1) >= 1, let start = vector.iov_base else {
            return .failed(code: ENOMEM)
        }
        while true {
            let count = recv(fd, start, min(vector.iov_len, limit), 0)
            let code = errno
            vector.iov_len = max(count, 0)
            // Committing what the reservation received (possibly nothing) cannot fail: the
            // space was reserved just above and the buffer was not touched in between.
            _ = evbuffer_commit_space(buffer, &vector, 1)
            if count > 0 { return .moved(count, drained: count < limit) }
            if count == 0 { return .endOfFile }
            if code == EINTR {
                guard evbuffer_reserve_space(buffer, limit, &vector, 1) >= 1 else {
                    return .failed(code: ENOMEM)
                }
                continue
            }
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
