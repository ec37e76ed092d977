import CCrypto

/// Client-side TLS settings shared by the connections of one loop: certificates verified
/// against the system CA store (or a given CA file), TLS 1.2 or later, SNI and host-name
/// verification on every connection.
public final class TLSClientContext {
    private let context: OpaquePointer

    /// Creates a context.
    ///
    /// - Parameter caFile: a PEM file of CAs to trust instead of the system store.
    /// - Throws: `EventLoopError` when OpenSSL cannot load the CA store or file.
    public init(caFile: String? = nil) throws(EventLoopError) {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw EventLoopError("SSL_CTX_new failed")
        }
        // From here on a throw runs deinit, which frees the context.
        self.context = context
        guard fg_ssl_ctx_min_tls12(context) == 1 else {
            throw EventLoopError("SSL_CTX_set_min_proto_version failed")
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if let caFile {
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw EventLoopError("cannot load CA file \(caFile)")
            }
        } else {
            guard SSL_CTX_set_default_verify_paths(context) == 1 else {
                throw EventLoopError("cannot load the system CA store")
            }
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// A new `SSL` for a connection to `host`: SNI (for names) and verification of the
    /// certificate's name or IP address.
    func makeSSL(host: String) throws(EventLoopError) -> OpaquePointer {
        guard let ssl = SSL_new(context) else { throw EventLoopError("SSL_new failed") }
        SSL_set_connect_state(ssl)
        let isAddress =
            host.allSatisfy { $0.isHexDigit || $0 == "." || $0 == ":" }
            && (host.contains(".") || host.contains(":"))
            && host.split(separator: ".").allSatisfy { Int($0) != nil } || host.contains(":")
        if isAddress {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 else {
                SSL_free(ssl)
                throw EventLoopError("bad upstream address \(host)")
            }
        } else {
            guard fg_ssl_set_sni(ssl, host) == 1, SSL_set1_host(ssl, host) == 1 else {
                SSL_free(ssl)
                throw EventLoopError("bad upstream host \(host)")
            }
        }
        return ssl
    }
}
