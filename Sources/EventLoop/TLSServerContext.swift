import CCrypto

/// Server-side TLS settings for accepted connections (`BufferedSocket.accepted(base:fd:tls:)`):
/// a certificate chain and its private key, TLS 1.2 or later. The same socket and transport
/// code as the client side runs them.
public final class TLSServerContext {
    private let context: OpaquePointer

    /// Loads the PEM certificate chain and private key.
    ///
    /// - Throws: `EventLoopError` when OpenSSL cannot read either or they do not match.
    public init(certificateFile: String, keyFile: String) throws(EventLoopError) {
        guard let context = SSL_CTX_new(TLS_server_method()) else {
            throw EventLoopError("SSL_CTX_new failed")
        }
        // From here on a throw runs deinit, which frees the context.
        self.context = context
        guard fg_ssl_ctx_min_tls12(context) == 1 else {
            throw EventLoopError("SSL_CTX_set_min_proto_version failed")
        }
        guard SSL_CTX_use_certificate_chain_file(context, certificateFile) == 1 else {
            throw EventLoopError("cannot load the certificate chain \(certificateFile)")
        }
        guard SSL_CTX_use_PrivateKey_file(context, keyFile, SSL_FILETYPE_PEM) == 1,
            SSL_CTX_check_private_key(context) == 1
        else {
            throw EventLoopError("cannot load the private key \(keyFile) (or it does not match)")
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// A new `SSL` that accepts a connection.
    func makeSSL() throws(EventLoopError) -> OpaquePointer {
        guard let ssl = SSL_new(context) else { throw EventLoopError("SSL_new failed") }
        SSL_set_accept_state(ssl)
        return ssl
    }
}
