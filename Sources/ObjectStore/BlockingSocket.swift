import CCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// One blocking connection (TCP or a Unix socket, optionally TLS) with send and receive
/// deadlines: what the store threads talk to S3 and Redis through. Not thread-safe: one user
/// at a time.
final class BlockingSocket {
    /// Why a connection failed: the call and `errno` (or 0 for TLS and protocol failures).
    struct Failure: Error {
        var call: String
        var code: Int32
    }

    private var fd: Int32
    private var ssl: OpaquePointer?

    private init(fd: Int32) {
        self.fd = fd
    }

    deinit { close() }

    /// Connects to `host`:`port` (each address `getaddrinfo` gives, in order), with
    /// `timeoutMilliseconds` for the connection and for every later send and receive; TLS when
    /// `tls` (the certificate verified against the system's store, for `host`, SNI sent).
    static func connect(
        host: String, port: Int, timeoutMilliseconds: Int64, tls: Bool
    ) throws(Failure) -> BlockingSocket {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let list else { throw Failure(call: "getaddrinfo \(host)", code: ENOENT) }
        defer { freeaddrinfo(list) }
        var last = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            entry = current.pointee.ai_next
            let fd = socket(
                current.pointee.ai_family, current.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), 0)
            guard fd >= 0 else {
                last = errno
                continue
            }
            let socket = BlockingSocket(fd: fd)
            socket.setTimeouts(timeoutMilliseconds)
            if Glibc.connect(fd, current.pointee.ai_addr, current.pointee.ai_addrlen) != 0 {
                last = errno
                continue
            }
            var one: Int32 = 1
            if current.pointee.ai_family != AF_UNIX {
                setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            if tls { try socket.startTLS(host: host) }
            return socket
        }
        throw Failure(call: "connect \(host):\(port)", code: last)
    }

    /// Connects to the Unix socket at `path`.
    static func connect(unixPath path: String, timeoutMilliseconds: Int64) throws(Failure) -> BlockingSocket {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw Failure(call: "connect unix: path too long", code: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(call: "socket", code: errno) }
        let socket = BlockingSocket(fd: fd)
        socket.setTimeouts(timeoutMilliseconds)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { throw Failure(call: "connect unix:\(path)", code: errno) }
        return socket
    }

    private func setTimeouts(_ milliseconds: Int64) {
        var timeout = timeval(tv_sec: Int(milliseconds / 1000), tv_usec: Int(milliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    // MARK: TLS

    /// The client context: the system's trust store, TLS 1.2 at least, peers verified.
    nonisolated(unsafe) private static let context: OpaquePointer? = {
        guard let context = SSL_CTX_new(TLS_client_method()) else { return nil }
        guard SSL_CTX_set_default_verify_paths(context) == 1, fg_ssl_ctx_min_tls12(context) == 1 else {
            SSL_CTX_free(context)
            return nil
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        return context
    }()

    private func startTLS(host: String) throws(Failure) {
        guard let context = Self.context, let ssl = SSL_new(context) else {
            throw Failure(call: "TLS context", code: 0)
        }
        self.ssl = ssl
        let isAddress =
            host.contains(":") || host.utf8.allSatisfy { $0 == UInt8(ascii: ".") || ($0 >= 48 && $0 <= 57) }
        if !isAddress { _ = fg_ssl_set_sni(ssl, host) }
        let checked =
            isAddress
            ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 : SSL_set1_host(ssl, host) == 1
        guard checked, SSL_set_fd(ssl, fd) == 1 else { throw Failure(call: "TLS setup", code: 0) }
        guard SSL_connect(ssl) == 1, SSL_get_verify_result(ssl) == Int(X509_V_OK) else {
            ERR_clear_error()
            throw Failure(call: "TLS handshake with \(host) (certificate not verified?)", code: 0)
        }
    }

    // MARK: I/O

    /// Sends every byte of `bytes`.
    private func sendAll(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let result: Int
            if let ssl {
                result = Int(
                    SSL_write(ssl, bytes.baseAddress! + sent, Int32(min(bytes.count - sent, 1 << 30))))
                if result <= 0 {
                    ERR_clear_error()
                    throw Failure(call: "TLS write", code: errno)
                }
            } else {
                result = Glibc.send(fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                if result < 0, errno == EINTR { continue }
                if result <= 0 { throw Failure(call: "send", code: result == 0 ? EPIPE : errno) }
            }
            sent += result
        }
    }

    /// Sends `bytes`.
    func send(_ bytes: [UInt8]) throws(Failure) {
        let failure: Failure? = bytes.withUnsafeBytes { raw in
            do throws(Failure) {
                try sendAll(raw)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Receives at most `limit` bytes (none at the end of the stream).
    func receive(upTo limit: Int) throws(Failure) -> [UInt8] {
        var chunk = [UInt8](repeating: 0, count: limit)
        let result = chunk.withUnsafeMutableBytes { receiveOnce(into: $0) }
        let count = try result.get()
        chunk.removeSubrange(count...)
        return chunk
    }

    private func receiveOnce(into buffer: UnsafeMutableRawBufferPointer) -> Result<Int, Failure> {
        while true {
            if let ssl {
                let result = SSL_read(ssl, buffer.baseAddress, Int32(min(buffer.count, 1 << 30)))
                if result > 0 { return .success(Int(result)) }
                let reason = SSL_get_error(ssl, result)
                ERR_clear_error()
                if reason == SSL_ERROR_ZERO_RETURN { return .success(0) }
                return .failure(Failure(call: "TLS read", code: errno == 0 ? EIO : errno))
            }
            let result = recv(fd, buffer.baseAddress, buffer.count, 0)
            if result < 0, errno == EINTR { continue }
            if result < 0 { return .failure(Failure(call: "recv", code: errno)) }
            return .success(result)
        }
    }

    func close() {
        if let ssl {
            SSL_free(ssl)
            self.ssl = nil
        }
        if fd >= 0 {
            Glibc.close(fd)
            fd = -1
        }
    }
}
