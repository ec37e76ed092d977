import CCrypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking TLS client on OpenSSL for what Python's `ssl` and curl cannot do: a KeyUpdate in
/// the middle of a request, and records cut as the test says (one `write` of at most 16 KiB is
/// one record). It verifies the server against `caFile` and offers ALPN `http/1.1` only.
final class OpenSSLClient {
    private let raw: RawClient
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    /// Handshake message types received after the handshake (4 NewSessionTicket, 24 KeyUpdate).
    private(set) var heard: [UInt8] = []
    private var connected = false

    /// Connects to 127.0.0.1:`port` with SNI `serverName`, TLS `version` exactly
    /// (`TLS1_2_VERSION`, `TLS1_3_VERSION`), and completes the handshake.
    init(port: Int, serverName: String, caFile: String, version: Int32) throws {
        raw = try RawClient(port: port)
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw TestFailure("SSL_CTX_new failed") }
        self.context = context
        guard let ssl = SSL_new(context) else {
            SSL_CTX_free(context)
            throw TestFailure("SSL_new failed")
        }
        self.ssl = ssl
        _ = SSL_ctrl(ssl, SSL_CTRL_SET_MIN_PROTO_VERSION, Int(version), nil)
        _ = SSL_ctrl(ssl, SSL_CTRL_SET_MAX_PROTO_VERSION, Int(version), nil)
        guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1,
            fg_ssl_set_sni(ssl, serverName) == 1, SSL_set1_host(ssl, serverName) == 1
        else { throw TestFailure("cannot set up verification of \(serverName)") }
        SSL_set_verify(ssl, SSL_VERIFY_PEER, nil)
        let protocols: [UInt8] = [8] + Array("http/1.1".utf8)
        // SSL_set_alpn_protos returns 0 on success.
        guard SSL_set_alpn_protos(ssl, protocols, UInt32(protocols.count)) == 0, SSL_set_fd(ssl, raw.fd) == 1
        else { throw TestFailure("cannot set up the connection") }
        _ = SSL_ctrl(ssl, SSL_CTRL_SET_MSG_CALLBACK_ARG, 0, Unmanaged.passUnretained(self).toOpaque())
        SSL_set_msg_callback(ssl) { writing, _, contentType, bytes, length, _, argument in
            guard writing == 0, contentType == SSL3_RT_HANDSHAKE, length > 0, let bytes, let argument else {
                return
            }
            let client = Unmanaged<OpenSSLClient>.fromOpaque(argument).takeUnretainedValue()
            if client.connected { client.heard.append(bytes.load(as: UInt8.self)) }
        }
        guard SSL_connect(ssl) == 1 else { throw TestFailure("handshake failed: \(Self.reason())") }
        connected = true
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// The version agreed (`TLSv1.3`).
    var version: String { String(cString: SSL_get_version(ssl)) }

    /// Sends `bytes` (one record per 16 KiB).
    func write(_ bytes: [UInt8]) throws {
        guard !bytes.isEmpty else { return }
        let count = SSL_write(ssl, bytes, Int32(bytes.count))
        guard count == Int32(bytes.count) else { throw TestFailure("SSL_write failed: \(Self.reason())") }
    }

    /// Sends `text` as UTF-8.
    func write(_ text: String) throws { try write(Array(text.utf8)) }

    /// A KeyUpdate (TLS 1.3), sent before the next record; `requested` asks the server to
    /// update its own key too.
    func keyUpdate(requested: Bool) throws {
        let type = requested ? SSL_KEY_UPDATE_REQUESTED : SSL_KEY_UPDATE_NOT_REQUESTED
        guard SSL_key_update(ssl, type) == 1 else { throw TestFailure("SSL_key_update failed") }
    }

    /// The records `bytes` make, returned instead of sent (for `sendRaw` to cut them).
    func seal(_ bytes: [UInt8]) throws -> [UInt8] {
        guard let memory = BIO_new(BIO_s_mem()), let socket = SSL_get_rbio(ssl), BIO_up_ref(socket) == 1
        else {
            throw TestFailure("BIO_new failed")
        }
        // The socket's BIO reads (and writes again after); the memory BIO takes these records.
        SSL_set0_wbio(ssl, memory)
        defer { SSL_set0_wbio(ssl, socket) }
        try write(bytes)
        var records = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(memory)))
        _ = BIO_read(memory, &records, Int32(records.count))
        return records
    }

    /// Sends bytes on the socket as they are (records `seal` made, or part of them).
    func sendRaw(_ bytes: some Collection<UInt8>) { raw.send(Array(bytes)) }

    /// Reads until the server ends the connection (or 30 s without a byte).
    func readToEnd() -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = SSL_read(ssl, &buffer, Int32(buffer.count))
            guard count > 0 else { return received }
            received += buffer[..<Int(count)]
        }
    }

    private static func reason() -> String {
        var text = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(ERR_get_error(), &text, text.count)
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
