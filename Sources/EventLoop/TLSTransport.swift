import CCrypto
import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// TLS over a connected socket with OpenSSL's `SSL_read`/`SSL_write` on the descriptor:
/// `WANT_READ`/`WANT_WRITE` become `.blocked`, a write that must be repeated is repeated with
/// the same bytes, and the first failure keeps OpenSSL's reason for `tlsError`. The `SSL`
/// comes from `TLSClientContext` (connect, SNI and verification) or `TLSServerContext`
/// (accept); the transport frees it.
///
/// Every record, client or server side, TLS 1.2 or 1.3, is read by OpenSSL's record layer:
/// alerts (sent and received), KeyUpdate (a peer that asks for one gets OpenSSL's before the
/// next record written here), close_notify, the refusal of renegotiation, and OpenSSL's
/// limits on empty records and warning alerts. Reads run with read-ahead, so records OpenSSL
/// holds and has not returned are input the kernel will not signal again: `hasBufferedInput`
/// says when a read would return some.
final class TLSTransport: SocketTransport {
    private let ssl: OpaquePointer
    /// What the `SSL`'s contexts and callbacks belong to (a `TLSServerContext`), kept alive as
    /// long as the connection: a reload may drop every other reference to it.
    private let settings: AnyObject?
    /// The length of a write that returned WANT_READ/WANT_WRITE: OpenSSL needs it repeated.
    private var retryLength = 0
    private var handshakeDone = false
    private var failed = false
    /// OpenSSL's packed error code of the first failure.
    private var errorCode: UInt = 0
    /// How a read that returned bytes ended (not WANT_READ): the next read reports it.
    private var pendingStatus: TransportStatus?
    /// Whether the last read ended blocked: what OpenSSL holds then is at most part of a
    /// record, which only the socket can complete (and the socket's events will say when).
    private var readBlocked = false
    /// OpenSSL's read buffer with read-ahead: four records and their framing.
    static let readAheadSize = 64 * 1024 + 512

    /// Takes ownership of `ssl` (freed on deinit), set up for connecting or accepting, and
    /// keeps `settings` alive until then.
    init(ssl: OpaquePointer, settings: AnyObject? = nil) {
        self.ssl = ssl
        self.settings = settings
        // SSL_set_mode returns the new mode bits; it cannot fail. RELEASE_BUFFERS frees the
        // read buffer whenever it empties, so an idle connection holds none.
        _ = SSL_ctrl(
            ssl, SSL_CTRL_MODE,
            Int(
                SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS
            ),
            nil)
        // Read ahead into a 64 KiB buffer: one read(2) takes several records, where OpenSSL
        // otherwise reads about one record per call (33,038 read(2)s for a 1 GiB h2 upload,
        // strace -c). Records read ahead and not yet returned are `hasBufferedInput`.
        SSL_set_read_ahead(ssl, 1)
        SSL_set_default_read_buffer_len(ssl, Self.readAheadSize)
    }

    func attach(_ fd: Int32) throws(EventLoopError) {
        guard SSL_set_fd(ssl, fd) == 1 else {
            throw EventLoopError("SSL_set_fd failed")
        }
    }

    deinit {
        SSL_free(ssl)
    }

    var isTLS: Bool { true }
    /// An ending the next read reports, or bytes OpenSSL read ahead and has not returned
    /// (`SSL_has_pending`: decrypted or not), unless the last read found them short of a
    /// record. Never true when a read would only block again: `BufferedSocket` would read
    /// again at once, and again, without ever returning to the loop (a client that sent part
    /// of a record and stopped held a worker that way).
    var hasBufferedInput: Bool {
        if pendingStatus != nil { return true }
        if failed || readBlocked { return false }
        return SSL_has_pending(ssl) == 1
    }

    var applicationProtocol: String? {
        var data: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &data, &length)
        guard let data, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
    }

    /// Why the handshake failed, once it has.
    var handshakeError: TLSHandshakeError? {
        guard failed, !handshakeDone else { return nil }
        return TLSHandshakeError(openSSLError: errorCode)
    }

    var resumedSession: Bool { fg_ssl_session_reused(ssl) == 1 }

    var failureDescription: String? {
        guard errorCode != 0 else {
            if failed, handshakeDone == false { return "handshake failed" }
            return nil
        }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(errorCode, &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func handshake(_ fd: Int32) -> TransportStatus {
        guard !handshakeDone else { return .moved(0, drained: true) }
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        guard result == 1 else { return status(of: result) }
        handshakeDone = true
        return .moved(0, drained: true)
    }

    /// Decrypts records into one reservation of up to `limit` bytes, so a wake-up's plaintext
    /// lies in one contiguous chain (an HTTP/2 DATA frame reaches its callback whole, not cut
    /// at every 16 KiB read). A read that ends on WANT_READ after some bytes reports
    /// `drained`, the next call would only block; any other end after some bytes is reported
    /// by the next call.
    func read(_ fd: Int32, into buffer: OpaquePointer, limit: Int) -> TransportStatus {
        if let status = pendingStatus {
            pendingStatus = nil
            return status
        }
        var vector = iovec()
        guard evbuffer_reserve_space(buffer, limit, &vector, 1) >= 1, let start = vector.iov_base else {
            return .failed(code: ENOMEM)
        }
        let room = min(vector.iov_len, limit)
        var filled = 0
        var ending: TransportStatus?
        while filled < room {
            Self.clearErrors()
            let count = SSL_read(ssl, start + filled, Int32(clamping: room - filled))
            guard count > 0 else {
                ending = status(of: count)
                break
            }
            filled += Int(count)
        }
        if case .blocked = ending { readBlocked = true } else { readBlocked = false }
        vector.iov_len = filled
        // Committing the reservation just made (possibly with nothing in it) cannot fail.
        _ = evbuffer_commit_space(buffer, &vector, 1)
        guard filled > 0 else { return ending ?? .moved(0, drained: true) }
        switch ending {
        case nil:
            return .moved(filled, drained: false)
        case .blocked(.readable):
            return .moved(filled, drained: true)
        case .some(let status):
            pendingStatus = status
            return .moved(filled, drained: false)
        }
    }

    func write(_ fd: Int32, from buffer: OpaquePointer, limit: Int) -> TransportStatus {
        var vector = iovec()
        guard evbuffer_peek(buffer, -1, nil, &vector, 1) >= 1, let start = vector.iov_base else {
            return .moved(0, drained: true)
        }
        let length = retryLength > 0 ? retryLength : min(vector.iov_len, limit)
        guard length <= vector.iov_len else {
            // The bytes of an interrupted write left the buffer: the stream is broken.
            failed = true
            return .failed(code: EPIPE)
        }
        Self.clearErrors()
        let count = SSL_write(ssl, start, Int32(length))
        guard count > 0 else {
            let result = status(of: count)
            if case .blocked = result { retryLength = length }
            return result
        }
        retryLength = 0
        // Draining bytes that are there cannot fail.
        _ = evbuffer_drain(buffer, Int(count))
        return .moved(Int(count), drained: false)
    }

    func finishSending(_ fd: Int32) {
        guard handshakeDone, !failed else { return }
        ERR_clear_error()
        // One non-blocking attempt: close_notify goes out if the kernel takes it; a peer that
        // never reads it loses nothing (the connection ends either way), so the result is not
        // waited for.
        _ = SSL_shutdown(ssl)
    }

    /// Empties the thread's error queue before an I/O call (`SSL_get_error` reads it), only
    /// when something is in it: `ERR_clear_error` walks every slot of the queue, 1 % of the
    /// proxy's CPU on a TLS upload when called before every 16 KiB read.
    private static func clearErrors() {
        if ERR_peek_error() != 0 { ERR_clear_error() }
    }

    /// What a non-positive `SSL_*` return means.
    private func status(of result: Int32) -> TransportStatus {
        let code = errno
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ:
            return .blocked(.readable)
        case SSL_ERROR_WANT_WRITE:
            return .blocked(.writable)
        case SSL_ERROR_ZERO_RETURN:
            return .endOfFile
        case SSL_ERROR_SYSCALL:
            failed = true
            errorCode = ERR_get_error()
            // An end of file without close_notify is an error, as before: a response framed
            // by the close could have been cut off.
            return .failed(code: code == 0 ? ECONNRESET : code)
        default:
            failed = true
            errorCode = ERR_get_error()
            return .failed(code: EPROTO)
        }
    }
}
