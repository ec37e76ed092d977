import CCrypto

/// The lowest TLS version a listener accepts (1.0 and 1.1 are never accepted).
public enum TLSMinimumVersion: String, Sendable, Equatable {
    case tls12 = "1.2"
    case tls13 = "1.3"
}

/// A certificate chain file and its private key file, both PEM.
public struct TLSCertificateFiles: Sendable, Equatable {
    /// The certificate chain: the leaf first, then intermediates.
    public var certificate: String
    /// The private key of the leaf.
    public var key: String

    /// Names the two files.
    public init(certificate: String, key: String) {
        self.certificate = certificate
        self.key = key
    }
}

/// Server-side TLS settings for accepted connections (`BufferedSocket.accepted(base:fd:tls:)`):
/// one or more certificates chosen by the client's SNI name, TLS 1.2 or 1.3 at the least,
/// ALPN, session resumption. The same socket and transport code as the client side runs them.
///
/// Each certificate has its own `SSL_CTX`; the first accepts every connection. A client that
/// sends no SNI gets the first certificate; a name that one of the others covers switches the
/// connection to that one's context (`SSL_set_SSL_CTX`); a name no certificate covers ends
/// the handshake with a fatal `unrecognized_name` alert. Resumption uses the first context:
/// session tickets under its own keys (OpenSSL's default, made per context) and its
/// server-side session cache, both shared by every thread that accepts with this object.
///
/// Immutable once made and safe to use from several threads (OpenSSL locks its session
/// cache; `SSL_new` on a shared context is thread-safe). A reload makes a new object; each
/// connection's transport keeps the one it started with alive, so the `SSL_CTX`s and the
/// callbacks' argument outlive every handshake that uses them.
public final class TLSServerContext: @unchecked Sendable {
    /// The protocols the server agrees to in ALPN, in preference order (`h2` first on a
    /// listener that serves HTTP/2).
    public let applicationProtocols: [String]
    /// Sessions the server-side cache holds at most (OpenSSL's default size).
    static let sessionCacheSize = 20_480
    /// The session id context: a session resumes only on a FormGate listener.
    private static let sessionIDContext = Array("formgate".utf8)

    /// One `SSL_CTX` per certificate, in configuration order; `contexts[0]` accepts.
    private let contexts: [OpaquePointer]
    /// Which certificate covers an SNI name.
    public let matcher: ServerNameMatcher
    /// `applicationProtocols` in ALPN's wire format (length-prefixed). OpenSSL keeps a pointer
    /// into it as the selected protocol, so it is allocated once and freed with this object.
    private let protocolList: UnsafeMutableBufferPointer<UInt8>

    /// Loads every certificate chain and key.
    ///
    /// - Throws: `EventLoopError` naming the file when OpenSSL cannot read one, a key does not
    ///   match its certificate, or `certificates` is empty.
    public init(
        certificates: [TLSCertificateFiles], minimumVersion: TLSMinimumVersion = .tls12,
        applicationProtocols: [String] = ["http/1.1"]
    ) throws(EventLoopError) {
        self.applicationProtocols = applicationProtocols
        guard !certificates.isEmpty else { throw EventLoopError("a TLS listener needs a certificate") }
        var contexts: [OpaquePointer] = []
        do throws(EventLoopError) {
            for files in certificates {
                contexts.append(try Self.makeContext(files, minimumVersion))
            }
        } catch {
            for context in contexts { SSL_CTX_free(context) }
            throw error
        }
        self.contexts = contexts
        matcher = ServerNameMatcher(names: contexts.map { Self.names(of: SSL_CTX_get0_certificate($0)) })
        let wire = applicationProtocols.flatMap { [UInt8($0.utf8.count)] + Array($0.utf8) }
        protocolList = .allocate(capacity: wire.count)
        _ = protocolList.initialize(from: wire)
        let argument = Unmanaged.passUnretained(self).toOpaque()
        for context in contexts {
            SSL_CTX_set_alpn_select_cb(context, alpnTrampoline, argument)
        }
        guard fg_ssl_ctx_set_servername_cb(contexts[0], serverNameTrampoline, argument) == 1 else {
            throw EventLoopError("cannot set the SNI callback")
        }
    }

    /// One certificate and key, TLS 1.2 or later.
    public convenience init(certificateFile: String, keyFile: String) throws(EventLoopError) {
        try self.init(certificates: [TLSCertificateFiles(certificate: certificateFile, key: keyFile)])
    }

    deinit {
        for context in contexts { SSL_CTX_free(context) }
    }

    /// A context with one certificate and the listener's protocol settings; freed on failure.
    private static func makeContext(_ files: TLSCertificateFiles, _ minimumVersion: TLSMinimumVersion)
        throws(EventLoopError) -> OpaquePointer
    {
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw EventLoopError("SSL_CTX_new failed")
        }
        do throws(EventLoopError) {
            let version = minimumVersion == .tls13 ? TLS1_3_VERSION : TLS1_2_VERSION
            guard fg_ssl_ctx_min_version(context, version) == 1 else {
                throw EventLoopError("SSL_CTX_set_min_proto_version failed")
            }
            // Renegotiation is a client's way to make the server work again mid-connection.
            fg_ssl_ctx_no_renegotiation(context)
            fg_ssl_ctx_server_session_cache(context, sessionCacheSize)
            guard
                SSL_CTX_set_session_id_context(context, sessionIDContext, UInt32(sessionIDContext.count)) == 1
            else {
                throw EventLoopError("SSL_CTX_set_session_id_context failed")
            }
            guard SSL_CTX_use_certificate_chain_file(context, files.certificate) == 1 else {
                throw EventLoopError(
                    "cannot load the certificate chain \(files.certificate)\(openSSLReason())")
            }
            guard SSL_CTX_use_PrivateKey_file(context, files.key, SSL_FILETYPE_PEM) == 1,
                SSL_CTX_check_private_key(context) == 1
            else {
                throw EventLoopError(
                    "cannot load the private key \(files.key) (or it does not match)\(openSSLReason())")
            }
        } catch {
            SSL_CTX_free(context)
            throw error
        }
        return context
    }

    /// The DNS names a certificate covers: its subjectAltName dNSNames, else its subject CN.
    private static func names(of certificate: OpaquePointer?) -> [String] {
        guard let certificate else { return [] }
        var names: [String] = []
        var text = [CChar](repeating: 0, count: 256)
        for index in 0... {
            let length = fg_x509_dns_name(certificate, Int32(index), &text, Int32(text.count))
            if length == -1 { break }
            if length >= 0 {
                names.append(
                    String(decoding: text.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        guard names.isEmpty else { return names }
        let subject = X509_get_subject_name(certificate)
        let position = X509_NAME_get_index_by_NID(subject, NID_commonName, -1)
        guard position >= 0, let entry = X509_NAME_get_entry(subject, position),
            let data = X509_NAME_ENTRY_get_data(entry), let bytes = ASN1_STRING_get0_data(data)
        else { return [] }
        let common = UnsafeBufferPointer(start: bytes, count: Int(ASN1_STRING_length(data)))
        return [String(decoding: common, as: UTF8.self)]
    }

    /// OpenSSL's reason for the last failure, as `: reason` (or nothing), and the queue cleared.
    private static func openSSLReason() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "" }
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &text, text.count)
        return ": " + String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A new `SSL` that accepts a connection.
    func makeSSL() throws(EventLoopError) -> OpaquePointer {
        guard let ssl = SSL_new(contexts[0]) else { throw EventLoopError("SSL_new failed") }
        SSL_set_accept_state(ssl)
        return ssl
    }

    /// The SNI callback: keeps the first certificate without a name, switches to the one that
    /// covers the name, refuses a name none covers.
    fileprivate func selectCertificate(_ ssl: OpaquePointer, _ alert: UnsafeMutablePointer<Int32>?) -> Int32 {
        guard let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) else { return SSL_TLSEXT_ERR_OK }
        guard let index = matcher.certificate(for: String(cString: name)) else {
            alert?.pointee = SSL_AD_UNRECOGNIZED_NAME
            return SSL_TLSEXT_ERR_ALERT_FATAL
        }
        guard index == 0 || SSL_set_SSL_CTX(ssl, contexts[index]) != nil else {
            alert?.pointee = SSL_AD_INTERNAL_ERROR
            return SSL_TLSEXT_ERR_ALERT_FATAL
        }
        return SSL_TLSEXT_ERR_OK
    }

    /// The ALPN callback: the first of `applicationProtocols` the client offers; a client
    /// that offers none of them goes on without ALPN.
    fileprivate func selectProtocol(
        _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, _ outLength: UnsafeMutablePointer<UInt8>?,
        _ offered: UnsafePointer<UInt8>?, _ offeredLength: UInt32
    ) -> Int32 {
        var chosen: UnsafeMutablePointer<UInt8>?
        var length: UInt8 = 0
        guard let server = protocolList.baseAddress,
            SSL_select_next_proto(
                &chosen, &length, server, UInt32(protocolList.count), offered, offeredLength)
                == OPENSSL_NPN_NEGOTIATED
        else { return SSL_TLSEXT_ERR_NOACK }
        // `chosen` points into `protocolList`, which lives as long as this object (and so as
        // long as the connection's transport).
        out?.pointee = UnsafePointer(chosen)
        outLength?.pointee = length
        return SSL_TLSEXT_ERR_OK
    }
}

private func serverNameTrampoline(
    _ ssl: OpaquePointer?, _ alert: UnsafeMutablePointer<Int32>?, _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    guard let ssl, let argument else { return SSL_TLSEXT_ERR_ALERT_FATAL }
    return Unmanaged<TLSServerContext>.fromOpaque(argument).takeUnretainedValue().selectCertificate(
        ssl, alert)
}

private func alpnTrampoline(
    _ ssl: OpaquePointer?, _ out: UnsafeMutablePointer<UnsafePointer<UInt8>?>?,
    _ outLength: UnsafeMutablePointer<UInt8>?, _ offered: UnsafePointer<UInt8>?, _ offeredLength: UInt32,
    _ argument: UnsafeMutableRawPointer?
) -> Int32 {
    guard let argument else { return SSL_TLSEXT_ERR_NOACK }
    return Unmanaged<TLSServerContext>.fromOpaque(argument).takeUnretainedValue().selectProtocol(
        out, outLength, offered, offeredLength)
}
