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
/// On an accepted connection that agreed TLS 1.3, the client's records are read by a
/// `TLSRecordReader` once the handshake is done, under the client's traffic secret (taken
/// from OpenSSL's key-log callback, which hands it to this object only); OpenSSL reads
/// the handshake without read-ahead, so no record past it sits in OpenSSL's buffer. Any
/// other connection (TLS 1.2, the client side, a suite the reader lacks) reads through
/// `SSL_read` with read-ahead.
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
    /// The client's records once an accepted TLS 1.3 handshake is done.
    private(set) var recordReader: TLSRecordReader?
    /// client_application_traffic_secret_0 from the key-log callback, until the handshake
    /// ends (then wiped).
    private var clientSecret: [UInt8] = []
    private let accepting: Bool
    /// OpenSSL's read buffer with read-ahead: four records and their framing.
    static let readAheadSize = 64 * 1024 + 512
    /// The `SSL` ex-data slot that points at its transport (for the key-log callback).
    static let transportSlot = CRYPTO_get_ex_new_index(CRYPTO_EX_INDEX_SSL, 0, nil, nil, nil, nil)

    /// Takes ownership of `ssl` (freed on deinit), set up for connecting or accepting, and
    /// keeps `settings` alive until then. `accepting` (a server's `SSL`, whose contexts log
    /// keys to `keyLogTrampoline`) lets the transport read TLS 1.3 records itself.
    init(ssl: OpaquePointer, settings: AnyObject? = nil, accepting: Bool = false) {
        self.ssl = ssl
        self.settings = settings
        self.accepting = accepting
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
        SSL_set_default_read_buffer_len(ssl, Self.readAheadSize)
        if accepting, Self.transportSlot >= 0,
            SSL_set_ex_data(ssl, Self.transportSlot, Unmanaged.passUnretained(self).toOpaque()) == 1
        {
            // Read-ahead waits for the handshake's end: the records after it are this
            // transport's to read.
            SSL_set_read_ahead(ssl, 0)
        } else {
            SSL_set_read_ahead(ssl, 1)
        }
    }

    func attach(_ fd: Int32) throws(EventLoopError) {
        guard SSL_set_fd(ssl, fd) == 1 else {
            throw EventLoopError("SSL_set_fd failed")
        }
    }

    deinit {
        SSL_free(ssl)
        wipeClientSecret()
    }

    var isTLS: Bool { true }
    var hasBufferedInput: Bool {
        if pendingStatus != nil { return true }
        if failed { return false }
        if let recordReader { return recordReader.hasBufferedInput }
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
        if let reason = recordReader?.failure { return reason }
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
        if result == 1 {
            handshakeDone = true
            if accepting { startReadingRecords() }
            return .moved(0, drained: true)
        }
        let status = status(of: result)
        if case .failed = status { wipeClientSecret() }
        return status
    }

    /// Hands the client's records to a `TLSRecordReader` when the connection agreed TLS 1.3
    /// with a suite it opens, the key log gave the client's secret, and OpenSSL holds no
    /// input past the handshake; else turns read-ahead on for `SSL_read`.
    private func startReadingRecords() {
        defer { wipeClientSecret() }
        if SSL_version(ssl) == TLS1_3_VERSION, SSL_has_pending(ssl) == 0, !clientSecret.isEmpty,
            let cipher = SSL_get_current_cipher(ssl),
            let suite = TLSRecordReader.Suite(rawValue: SSL_CIPHER_get_protocol_id(cipher)),
            let reader = TLSRecordReader(suite: suite, secret: clientSecret)
        {
            recordReader = reader
            return
        }
        SSL_set_read_ahead(ssl, 1)
    }

    /// Keeps the secret the key log reports for the client's application records: the line is
    /// `CLIENT_TRAFFIC_SECRET_0 client_random secret`, both in hex.
    fileprivate func logged(_ line: UnsafePointer<CChar>) {
        guard handshakeDone == false else { return }
        let label = "CLIENT_TRAFFIC_SECRET_0 "
        guard strncmp(line, label, label.utf8.count) == 0, let space = strrchr(line, 0x20) else { return }
        var secret = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length = 0
        guard OPENSSL_hexstr2buf_ex(&secret, secret.count, &length, space + 1, 0) == 1 else {
            ERR_clear_error()
            return
        }
        wipeClientSecret()
        clientSecret = Array(secret.prefix(length))
        secret.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
    }

    private func wipeClientSecret() {
        clientSecret.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) }
        clientSecret = []
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
        if let recordReader {
            (filled, ending) = recordReader.read(
                fd, into: start.assumingMemoryBound(to: UInt8.self), room: room)
            if case .failed = ending { failed = true }
        }
        while recordReader == nil, filled < room {
            Self.clearErrors()
            let count = SSL_read(ssl, start + filled, Int32(clamping: room - filled))
            guard count > 0 else {
                ending = status(of: count)
                break
            }
            filled += Int(count)
        }
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
        if let recordReader, recordReader.keyUpdateOwed, retryLength == 0 {
            // The client asked for a KeyUpdate: OpenSSL sends it before these bytes.
            if SSL_key_update(ssl, SSL_KEY_UPDATE_NOT_REQUESTED) == 1 { recordReader.keyUpdateOwed = false }
        }
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

/// OpenSSL's key-log callback on a server context: passes each line to the transport of the
/// `SSL` it concerns, which keeps only the client's application traffic secret (never logged
/// or written anywhere).
func keyLogTrampoline(_ ssl: OpaquePointer?, _ line: UnsafePointer<CChar>?) {
    guard let ssl, let line, TLSTransport.transportSlot >= 0,
        let transport = SSL_get_ex_data(ssl, TLSTransport.transportSlot)
    else { return }
    Unmanaged<TLSTransport>.fromOpaque(transport).takeUnretainedValue().logged(line)
}
