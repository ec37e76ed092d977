import CCrypto
import CLibevent
import Foundation
import Testing

@testable import EventLoop

/// The server side's own TLS 1.3 record reading (`TLSRecordReader` behind `TLSTransport`),
/// against OpenSSL as the client, step by step on a Unix socket pair: the client's records
/// go through a memory BIO, so a test decides how they are cut, or changes them, before
/// the server's descriptor gets them.
@Suite struct TLSRecordReaderTests {
    /// A server transport and an OpenSSL client with the handshake done.
    final class Pair {
        let serverContext: TLSServerContext
        let transport: TLSTransport
        let clientContext: OpaquePointer
        let client: OpaquePointer
        /// The client's outgoing records, taken by `pump`.
        let clientOutput: OpaquePointer
        let serverFD: Int32
        let clientFD: Int32
        let input = evbuffer_new()!
        let output = evbuffer_new()!
        /// Handshake message types the client received after the handshake.
        var clientHeard: [UInt8] = []
        /// The client's client_application_traffic_secret_0, from its key log (for `seal`).
        var clientSecret: [UInt8] = []
        /// The sequence number of the next record `seal` makes.
        var sealed: UInt64 = 0

        init(
            files: (directory: String, cert: String, key: String), maximumVersion: Int32 = TLS1_3_VERSION,
            suites: String? = nil
        ) throws {
            serverContext = try TLSServerContext(certificateFile: files.cert, keyFile: files.key)
            transport = TLSTransport(
                ssl: try serverContext.makeSSL(), settings: serverContext, accepting: true)
            var fds: [Int32] = [0, 0]
            #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
            serverFD = fds[0]
            clientFD = fds[1]
            for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
            try transport.attach(serverFD)
            clientContext = SSL_CTX_new(TLS_client_method())!
            _ = SSL_CTX_ctrl(clientContext, SSL_CTRL_SET_MAX_PROTO_VERSION, Int(maximumVersion), nil)
            if let suites { #expect(SSL_CTX_set_ciphersuites(clientContext, suites) == 1) }
            client = SSL_new(clientContext)!
            clientOutput = BIO_new(BIO_s_mem())!
            SSL_set_bio(client, BIO_new_socket(clientFD, BIO_NOCLOSE), clientOutput)
            SSL_set_connect_state(client)
            _ = SSL_set_ex_data(client, 0, Unmanaged.passUnretained(self).toOpaque())
            SSL_CTX_set_keylog_callback(clientContext) { ssl, line in
                guard let ssl, let line, let argument = SSL_get_ex_data(ssl, 0) else { return }
                let fields = String(cString: line).split(separator: " ")
                guard fields.count == 3, fields[0] == "CLIENT_TRAFFIC_SECRET_0" else { return }
                var bytes: [UInt8] = []
                var index = fields[2].startIndex
                while index < fields[2].endIndex {
                    let next = fields[2].index(index, offsetBy: 2)
                    bytes.append(UInt8(fields[2][index..<next], radix: 16)!)
                    index = next
                }
                Unmanaged<Pair>.fromOpaque(argument).takeUnretainedValue().clientSecret = bytes
            }
            _ = SSL_ctrl(client, SSL_CTRL_SET_MSG_CALLBACK_ARG, 0, Unmanaged.passUnretained(self).toOpaque())
            SSL_set_msg_callback(client) { writing, _, contentType, bytes, length, _, argument in
                guard writing == 0, contentType == SSL3_RT_HANDSHAKE, length > 0, let bytes, let argument
                else { return }
                let pair = Unmanaged<Pair>.fromOpaque(argument).takeUnretainedValue()
                pair.clientHeard.append(bytes.load(as: UInt8.self))
            }
            var clientDone = false
            var serverDone = false
            for _ in 0..<100 where !(clientDone && serverDone) {
                if !clientDone { clientDone = SSL_do_handshake(client) == 1 }
                pump()
                if !serverDone, case .moved = transport.handshake(serverFD) { serverDone = true }
            }
            #expect(clientDone && serverDone)
            clientHeard = []
        }

        deinit {
            SSL_free(client)
            SSL_CTX_free(clientContext)
            evbuffer_free(input)
            evbuffer_free(output)
            close(serverFD)
            close(clientFD)
        }

        /// The client's pending records, as bytes.
        func take() -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(clientOutput)))
            if !bytes.isEmpty { _ = BIO_read(clientOutput, &bytes, Int32(bytes.count)) }
            return bytes
        }

        /// Writes bytes to the server's socket whole (the test reads between sends, so the
        /// socket pair's buffer never fills).
        func send(_ bytes: [UInt8]) {
            var offset = 0
            while offset < bytes.count {
                let count = bytes[offset...].withUnsafeBytes { write(clientFD, $0.baseAddress, $0.count) }
                #expect(count > 0)
                guard count > 0 else { return }
                offset += count
            }
        }

        func pump() { send(take()) }

        /// Reads through the transport until it blocks or ends, at most `limit` per call;
        /// returns the bytes and the last status.
        func read(limit: () -> Int = { 1 << 20 }) -> ([UInt8], TransportStatus) {
            while true {
                let status = transport.read(serverFD, into: input, limit: limit())
                if case .moved = status { continue }
                let count = Int(evbuffer_get_length(input))
                var bytes = [UInt8](repeating: 0, count: count)
                if count > 0 { _ = evbuffer_remove(input, &bytes, count) }
                return (bytes, status)
            }
        }

        /// A TLS 1.3 record as the client would seal it (AES-128-GCM, the client's next
        /// sequence number), with any inner content type and padding: what no well-behaved
        /// client sends. Only before the client itself writes application data.
        func seal(type: UInt8, _ content: [UInt8], padding: Int = 0) -> [UInt8] {
            let digest = EVP_sha256()
            let key = TLSRecordReader.expandLabel(clientSecret, "key", length: 16, digest: digest)
            var nonce = TLSRecordReader.expandLabel(clientSecret, "iv", length: 12, digest: digest)
            for index in 0..<8 {
                nonce[11 - index] ^= UInt8(truncatingIfNeeded: sealed >> (8 * UInt64(index)))
            }
            sealed += 1
            let inner = content + [type] + [UInt8](repeating: 0, count: padding)
            let length = inner.count + 16
            let header: [UInt8] = [23, 3, 3, UInt8(length >> 8), UInt8(length & 0xff)]
            var out = [UInt8](repeating: 0, count: inner.count)
            var tag = [UInt8](repeating: 0, count: 16)
            let context = EVP_CIPHER_CTX_new()
            defer { EVP_CIPHER_CTX_free(context) }
            var count: Int32 = 0
            #expect(EVP_EncryptInit_ex(context, EVP_aes_128_gcm(), nil, key, nonce) == 1)
            #expect(EVP_EncryptUpdate(context, nil, &count, header, 5) == 1)
            #expect(EVP_EncryptUpdate(context, &out, &count, inner, Int32(inner.count)) == 1)
            // GCM writes nothing at the end; the tag comes after.
            var rest = [UInt8](repeating: 0, count: 16)
            #expect(EVP_EncryptFinal_ex(context, &rest, &count) == 1 && count == 0)
            #expect(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, 16, &tag) == 1)
            return header + out + tag
        }

        func clientWrite(_ bytes: [UInt8]) {
            #expect(SSL_write(client, bytes, Int32(bytes.count)) == Int32(bytes.count))
        }
    }

    static func withCertificate(_ body: ((directory: String, cert: String, key: String)) throws -> Void)
        throws
    {
        let files = try TLSSocketTests.makeCertificate()
        defer { try? FileManager.default.removeItem(atPath: files.directory) }
        try body(files)
    }

    @Test(arguments: ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"])
    func recordsCutAnywhereArriveByteExact(suite: String) throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files, suites: suite)
            _ = try #require(pair.transport.recordReader, "TLS 1.3 is read by FormGate")
            var random = SystemRandomNumberGenerator()
            let upload = pattern(3 << 20, seed: 7)
            var offset = 0
            var received: [UInt8] = []
            while offset < upload.count {
                let size = min(Int.random(in: 1...40_000, using: &random), upload.count - offset)
                pair.clientWrite(Array(upload[offset..<offset + size]))
                offset += size
                // The records reach the socket cut at random points, and the server reads
                // into random room (smaller than a record, often).
                var records = pair.take()[...]
                while !records.isEmpty {
                    let piece = min(Int.random(in: 1...20_000, using: &random), records.count)
                    pair.send(Array(records.prefix(piece)))
                    records = records.dropFirst(piece)
                    let (bytes, status) = pair.read { Int.random(in: 1...70_000, using: &random) }
                    #expect(status == .blocked(.readable))
                    received += bytes
                }
            }
            #expect(received.count == upload.count)
            #expect(received == upload)
            #expect(pair.transport.failureDescription == nil)
        }
    }

    @Test func aKeyUpdateChangesTheKeyAndOneRequestedIsAnswered() throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files)
            #expect(pair.transport.recordReader != nil)
            let first = pattern(100_000, seed: 1)
            let second = pattern(100_000, seed: 2)
            pair.clientWrite(first)
            // Three updates the server need not answer, then one it must.
            for _ in 0..<3 {
                #expect(SSL_key_update(pair.client, SSL_KEY_UPDATE_NOT_REQUESTED) == 1)
                pair.clientWrite([0x41])
            }
            #expect(SSL_key_update(pair.client, SSL_KEY_UPDATE_REQUESTED) == 1)
            pair.clientWrite(second)
            pair.pump()
            let (bytes, status) = pair.read()
            #expect(status == .blocked(.readable))
            #expect(bytes == first + [0x41, 0x41, 0x41] + second)
            #expect(pair.transport.recordReader?.keyUpdateOwed == true)

            // The answer: OpenSSL sends a KeyUpdate before the response's bytes, and the
            // client reads both.
            let response = pattern(5000, seed: 3)
            evbuffer_add(pair.output, response, response.count)
            #expect(
                pair.transport.write(pair.serverFD, from: pair.output, limit: 1 << 20)
                    == .moved(5000, drained: false))
            #expect(pair.transport.recordReader?.keyUpdateOwed == false)
            var answer = [UInt8](repeating: 0, count: 8000)
            let count = SSL_read(pair.client, &answer, Int32(answer.count))
            #expect(Array(answer.prefix(Int(max(count, 0)))) == response)
            #expect(pair.clientHeard.contains(24), "the server's KeyUpdate (handshake type 24)")

            // And the client's records after the update still open.
            pair.clientWrite(first)
            pair.pump()
            #expect(pair.read().0 == first)
        }
    }

    @Test func aChangedRecordIsRefusedAndNothingOfItIsDelivered() throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files)
            pair.clientWrite(pattern(1000, seed: 1))
            pair.clientWrite(pattern(1000, seed: 2))
            var records = pair.take()
            // Flip a bit in the second record's ciphertext.
            let second = 5 + (Int(records[3]) << 8 | Int(records[4]))
            records[second + 20] ^= 0x01
            pair.send(records)
            let (bytes, status) = pair.read()
            #expect(bytes == pattern(1000, seed: 1))
            #expect(status == .failed(code: EPROTO))
            #expect(pair.transport.failureDescription == "bad record mac")
            #expect(pair.transport.hasBufferedInput == false)
        }
    }

    @Test(arguments: [
        ([20, 3, 3, 0, 1, 1] as [UInt8], "unexpected record type 20"),
        ([23, 3, 3, 0x41, 0x01] as [UInt8], "record overflow"),
        ([23, 3, 3, 0, 16] + [UInt8](repeating: 0, count: 16), "record too short"),
        ([22, 3, 3, 0, 4, 24, 0, 0, 0] as [UInt8], "unexpected record type 22"),
    ])
    func aRecordTheProtocolForbidsEndsTheConnection(bytes: [UInt8], reason: String) throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files)
            pair.send(bytes)
            let (received, status) = pair.read()
            #expect(received.isEmpty)
            #expect(status == .failed(code: EPROTO))
            #expect(pair.transport.failureDescription == reason)
        }
    }

    @Test func closeNotifyEndsTheInputAfterTheData() throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files)
            pair.clientWrite(pattern(70_000, seed: 4))
            #expect(SSL_shutdown(pair.client) == 0)
            pair.pump()
            let (bytes, status) = pair.read()
            #expect(bytes == pattern(70_000, seed: 4))
            #expect(status == .endOfFile)
            #expect(pair.transport.failureDescription == nil)
        }
    }

    @Test func anEndWithoutCloseNotifyIsAnError() throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files)
            pair.clientWrite(pattern(1000, seed: 5))
            pair.pump()
            shutdown(pair.clientFD, Int32(SHUT_WR))
            let (bytes, status) = pair.read()
            #expect(bytes == pattern(1000, seed: 5))
            #expect(status == .failed(code: EPROTO))
            #expect(pair.transport.failureDescription == "unexpected eof while reading")
        }
    }

    @Test func tls12IsReadByOpenSSL() throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files, maximumVersion: TLS1_2_VERSION)
            #expect(pair.transport.recordReader == nil)
            let upload = pattern(200_000, seed: 6)
            pair.clientWrite(upload)
            pair.pump()
            #expect(pair.read().0 == upload)
        }
    }

    /// Records only a hostile client would seal, each read as RFC 8446 says.
    @Test func craftedRecordsAreReadAsTheProtocolSays() throws {
        try Self.withCertificate { files in
            func pair() throws -> Pair {
                let pair = try Pair(files: files, suites: "TLS_AES_128_GCM_SHA256")
                #expect(pair.transport.recordReader != nil && pair.clientSecret.count == 32)
                return pair
            }
            // Padding is not content; 32 empty records in a row are allowed, a user_canceled
            // alert is ignored, close_notify ends the input.
            var allowed = try pair()
            var records = allowed.seal(type: 23, Array("hello".utf8), padding: 300)
            for _ in 0..<32 { records += allowed.seal(type: 23, []) }
            records += allowed.seal(type: 21, [1, 90]) + allowed.seal(type: 23, Array(" world".utf8))
            records += allowed.seal(type: 21, [1, 0]) + allowed.seal(type: 23, Array("after".utf8))
            allowed.send(records)
            let (bytes, status) = allowed.read()
            #expect(bytes == Array("hello world".utf8))
            #expect(status == .endOfFile)

            let refused: [(records: (Pair) -> [UInt8], reason: String)] = [
                ({ pair in (0..<33).flatMap { _ in pair.seal(type: 23, []) } }, "too many empty records"),
                ({ pair in pair.seal(type: 0, [], padding: 10) }, "record without a content type"),
                ({ pair in pair.seal(type: 21, [2, 40]) }, "peer sent alert 40"),
                ({ pair in pair.seal(type: 21, [2, 40, 0x41]) }, "malformed alert"),
                ({ pair in pair.seal(type: 24, [1]) }, "unexpected content type 24"),
                ({ pair in pair.seal(type: 20, [1]) }, "unexpected content type 20"),
                ({ pair in pair.seal(type: 22, [4, 0, 0, 1, 0]) }, "unexpected handshake message"),
                ({ pair in pair.seal(type: 22, [24, 0, 0, 1, 2]) }, "unexpected handshake message"),
                (
                    { pair in pair.seal(type: 22, [24, 0, 0, 1, 0, 24, 0, 0, 1, 0]) },
                    "unexpected handshake message"
                ),
                (
                    { pair in pair.seal(type: 23, [UInt8](repeating: 0x41, count: 1 << 14), padding: 1) },
                    "record overflow"
                ),
            ]
            for (make, reason) in refused {
                allowed = try pair()
                allowed.send(allowed.seal(type: 23, Array("ok".utf8)) + make(allowed))
                let (bytes, status) = allowed.read()
                #expect(bytes == Array("ok".utf8), "\(reason)")
                #expect(status == .failed(code: EPROTO), "\(reason)")
                #expect(allowed.transport.failureDescription == reason)
            }
        }
    }
}
