import CCrypto

/// Why a server-side TLS handshake failed, in a fixed set (a metric label): no reason text
/// from the peer reaches it.
public enum TLSHandshakeError: String, CaseIterable, Sendable {
    /// The client closed or reset the connection before the handshake was done.
    case closed
    /// The client offered no TLS version the listener accepts (1.0, 1.1; 1.2 under
    /// `min_version: "1.3"`).
    case version
    /// The client's SNI name is covered by no certificate (`unrecognized_name`).
    case serverName = "server_name"
    /// Anything else: not TLS at all, no common cipher, a malformed message.
    case other

    /// The reason for OpenSSL's packed error `code` (0: the connection failed below TLS).
    init(openSSLError code: UInt) {
        guard code != 0 else {
            self = .closed
            return
        }
        switch ERR_GET_REASON(code) {
        case SSL_R_UNEXPECTED_EOF_WHILE_READING: self = .closed
        case SSL_R_UNSUPPORTED_PROTOCOL, SSL_R_VERSION_TOO_LOW, SSL_R_NO_PROTOCOLS_AVAILABLE: self = .version
        // The only callback a server handshake runs that can fail is the SNI one.
        case SSL_R_CALLBACK_FAILED: self = .serverName
        default: self = .other
        }
    }
}
