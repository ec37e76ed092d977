import CCrypto
import CLibevent
import Foundation
import Testing

@testable import EventLoop

/// The server side of `TLSTransport` on OpenSSL's record layer, against OpenSSL as the client,
/// step by step on a Unix socket pair: the client's records go through a memory BIO, so a test
/// decides how they are cut, or changes them, before the server's descriptor gets them.
@Suite struct TLSTransportTests {
    /// OpenSSL as a client on one end of a socket pair, non-blocking: its records go to a
    /// memory BIO until `take` or `pump` hands them on; it reads the socket directly.
    final class Client {
        let context: OpaquePointer
        let ssl: OpaquePointer
        /// The client's outgoing records, taken by `take`.
        let output: OpaquePointer
        let fd: Int32
        /// Handshake message types the client received after the handshake.
        var heard: [UInt8] = []
        /// Alerts the client received, as (level, description).
        var alerts: [[UInt8]] = []

        /// `version` is the highest the client offers; `ciphers` its TLS 1.3 suites or its
        /// TLS 1.2 cipher list, as `version` says.
        init(fd: Int32, version: Int32, ciphers: String?) {
            self.fd = fd
            context = SSL_CTX_new(TLS_client_method())!
            _ = SSL_CTX_ctrl(context, SSL_CTRL_SET_MAX_PROTO_VERSION, Int(version), nil)
            if let ciphers, version == TLS1_3_VERSION {
                #expect(SSL_CTX_set_ciphersuites(context, ciphers) == 1)
            } else if let ciphers {
                #expect(SSL_CTX_set_cipher_list(context, ciphers) == 1)
            }
            ssl = SSL_new(context)!
            output = BIO_new(BIO_s_mem())!
            SSL_set_bio(ssl, BIO_new_socket(fd, BIO_NOCLOSE), output)
            SSL_set_connect_state(ssl)
            _ = SSL_ctrl(ssl, SSL_CTRL_SET_MSG_CALLBACK_ARG, 0, Unmanaged.passUnretained(self).toOpaque())
            SSL_set_msg_callback(ssl) { writing, _, contentType, bytes, length, _, argument in
                guard writing == 0, length > 0, let bytes, let argument else { return }
                let client = Unmanaged<Client>.fromOpaque(argument).takeUnretainedValue()
                let message = UnsafeRawBufferPointer(start: bytes, count: length)
                if contentType == SSL3_RT_HANDSHAKE { client.heard.append(message[0]) }
                if contentType == SSL3_RT_ALERT { client.alerts.append(Array(message)) }
            }
        }

        deinit {
            SSL_free(ssl)
            SSL_CTX_free(context)
            close(fd)
        }

        /// The pending records, as bytes.
        func take() -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: Int(BIO_ctrl_pending(output)))
            if !bytes.isEmpty { _ = BIO_read(output, &bytes, Int32(bytes.count)) }
            return bytes
        }

        /// Writes bytes to the server's socket whole (the tests read between sends, so the
        /// socket pair's buffer never fills).
        func send(_ bytes: [UInt8]) {
            var offset = 0
            while offset < bytes.count {
                let count = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                #expect(count > 0)
                guard count > 0 else { return }
                offset += count
            }
        }

        func pump() { send(take()) }

        func write(_ bytes: [UInt8]) {
            #expect(SSL_write(ssl, bytes, Int32(bytes.count)) == Int32(bytes.count))
        }

        /// The server's records the client reads now (plaintext, as much as `capacity`).
        func read(capacity: Int = 1 << 16) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: capacity)
            let count = SSL_read(ssl, &bytes, Int32(capacity))
            return Array(bytes.prefix(Int(max(count, 0))))
        }
    }

    /// A server transport and an OpenSSL client with the handshake done.
    final class Pair {
        let serverContext: TLSServerContext
        let transport: TLSTransport
        let client: Client
        let serverFD: Int32
        let input = evbuffer_new()!
        let output = evbuffer_new()!

        init(
            files: (directory: String, cert: String, key: String), version: Int32 = TLS1_3_VERSION,
            ciphers: String? = nil
        ) throws {
            serverContext = try TLSServerContext(certificateFile: files.cert, keyFile: files.key)
            transport = TLSTransport(ssl: try serverContext.makeSSL(), settings: serverContext)
            let fds = try socketPair()
            serverFD = fds.server
            try transport.attach(serverFD)
            client = Client(fd: fds.client, version: version, ciphers: ciphers)
            var clientDone = false
            var serverDone = false
            for _ in 0..<100 where !(clientDone && serverDone) {
                if !clientDone { clientDone = SSL_do_handshake(client.ssl) == 1 }
                client.pump()
                if !serverDone, case .moved = transport.handshake(serverFD) { serverDone = true }
            }
            #expect(clientDone && serverDone)
            client.heard = []
        }

        deinit {
            evbuffer_free(input)
            evbuffer_free(output)
            close(serverFD)
        }

        /// Bytes waiting in the server's socket, not yet read by OpenSSL.
        var unreadInSocket: Int32 {
            var count: Int32 = 0
            _ = ioctl(serverFD, UInt(FIONREAD), &count)
            return count
        }

        /// Reads through the transport until it blocks or ends, at most `limit` per call;
        /// returns the bytes and the last status.
        func read(limit: () -> Int = { 1 << 20 }) -> ([UInt8], TransportStatus) {
            while true {
                let status = transport.read(serverFD, into: input, limit: limit())
                if case .moved = status { continue }
                return (takeInput(), status)
            }
        }

        /// What the server read so far, emptied.
        func takeInput() -> [UInt8] {
            let count = Int(evbuffer_get_length(input))
            var bytes = [UInt8](repeating: 0, count: count)
            if count > 0 { _ = evbuffer_remove(input, &bytes, count) }
            return bytes
        }
    }

    /// A non-blocking Unix socket pair.
    static func socketPair() throws -> (server: Int32, client: Int32) {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        for fd in fds { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) }
        return (fds[0], fds[1])
    }

    static func withCertificate(_ body: ((directory: String, cert: String, key: String)) throws -> Void)
        throws
    {
        let files = try TLSSocketTests.makeCertificate()
        defer { try? FileManager.default.removeItem(atPath: files.directory) }
        try body(files)
    }

    static let suites: [(version: Int32, ciphers: String)] = [
        (TLS1_3_VERSION, "TLS_AES_128_GCM_SHA256"), (TLS1_3_VERSION, "TLS_AES_256_GCM_SHA384"),
        (TLS1_3_VERSION, "TLS_CHACHA20_POLY1305_SHA256"), (TLS1_2_VERSION, "ECDHE-ECDSA-AES128-GCM-SHA256"),
        (TLS1_2_VERSION, "ECDHE-ECDSA-CHACHA20-POLY1305"),
    ]

    @Test(arguments: 0..<suites.count)
    func recordsCutAnywhereArriveByteExact(suite: Int) throws {
        let (version, ciphers) = Self.suites[suite]
        try Self.withCertificate { files in
            let pair = try Pair(files: files, version: version, ciphers: ciphers)
            let seed = UInt64(1000 + suite)
            var random = Seeded(seed: seed)
            let upload = pattern(3 << 20, seed: 7)
            var offset = 0
            var received: [UInt8] = []
            while offset < upload.count {
                let size = min(Int.random(in: 1...40_000, using: &random), upload.count - offset)
                pair.client.write(Array(upload[offset..<offset + size]))
                offset += size
                // The records reach the socket cut at random points, and the server reads
                // into random room (smaller than a record, often).
                var records = pair.client.take()[...]
                while !records.isEmpty {
                    let piece = min(Int.random(in: 1...20_000, using: &random), records.count)
                    pair.client.send(Array(records.prefix(piece)))
                    records = records.dropFirst(piece)
                    let (bytes, status) = pair.read { Int.random(in: 1...70_000, using: &random) }
                    #expect(status == .blocked(.readable), "\(ciphers), seed \(seed)")
                    // Blocked means the socket must bring the rest: nothing held is claimed.
                    #expect(pair.transport.hasBufferedInput == false, "\(ciphers), seed \(seed)")
                    received += bytes
                }
            }
            #expect(received.count == upload.count, "\(ciphers), seed \(seed)")
            #expect(received == upload, "\(ciphers), seed \(seed)")
            #expect(pair.transport.failureDescription == nil)
        }
    }

    @Test(arguments: [TLS1_3_VERSION, TLS1_2_VERSION])
    func manySmallRecordsArriveByteExact(version: Int32) throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files, version: version)
            let seed: UInt64 = 77
            var random = Seeded(seed: seed)
            let upload = pattern(400_000, seed: 8)
            var offset = 0
            var records = 0
            var received: [UInt8] = []
            while offset < upload.count {
                // A record of 1 to 40 bytes each, a few hundred of them per read.
                for _ in 0..<Int.random(in: 1...600, using: &random) where offset < upload.count {
                    let size = min(Int.random(in: 1...40, using: &random), upload.count - offset)
                    pair.client.write(Array(upload[offset..<offset + size]))
                    offset += size
                    records += 1
                }
                pair.client.pump()
                let (bytes, status) = pair.read { Int.random(in: 1...5000, using: &random) }
                #expect(status == .blocked(.readable), "seed \(seed)")
                received += bytes
            }
            #expect(records > 15_000)
            #expect(received == upload, "seed \(seed)")
        }
    }

    /// Read-ahead takes more records from the socket than a read returns: those are input the
    /// kernel will not signal again, and reads return them without another byte arriving.
    @Test(arguments: [TLS1_3_VERSION, TLS1_2_VERSION])
    func recordsReadAheadAreBufferedInputUntilReturned(version: Int32) throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files, version: version)
            let upload = pattern(60_000, seed: 9)
            for start in stride(from: 0, to: upload.count, by: 15_000) {
                pair.client.write(Array(upload[start..<start + 15_000]))
            }
            pair.client.pump()
            #expect(pair.transport.hasBufferedInput == false, "nothing read yet")
            #expect(
                pair.transport.read(pair.serverFD, into: pair.input, limit: 1000)
                    == .moved(1000, drained: false))
            #expect(pair.unreadInSocket == 0, "OpenSSL read all four records ahead")
            var reads = 1
            while pair.transport.hasBufferedInput {
                let status = pair.transport.read(pair.serverFD, into: pair.input, limit: 7000)
                guard case .moved = status else { break }
                reads += 1
            }
            #expect(pair.takeInput() == upload)
            #expect(reads == 1 + 59_000 / 7000 + 1)

            // Part of a record: the read blocks, and nothing held counts as input (the shell
            // would otherwise call the read again and again until the rest arrives).
            pair.client.write(Array(upload[0..<10_000]))
            let record = pair.client.take()
            pair.client.send(Array(record[0..<5000]))
            #expect(pair.read().1 == .blocked(.readable))
            #expect(pair.transport.hasBufferedInput == false)
            pair.client.send(Array(record[5000...]))
            #expect(pair.read().0 == Array(upload[0..<10_000]))
        }
    }

    @Test func keyUpdatesAreFollowedAndARequestedOneIsAnswered() throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files)
            let first = pattern(100_000, seed: 1)
            let second = pattern(100_000, seed: 2)
            pair.client.write(first)
            // Three updates the server need not answer, then one it must.
            for _ in 0..<3 {
                #expect(SSL_key_update(pair.client.ssl, SSL_KEY_UPDATE_NOT_REQUESTED) == 1)
                pair.client.write([0x41])
            }
            #expect(SSL_key_update(pair.client.ssl, SSL_KEY_UPDATE_REQUESTED) == 1)
            pair.client.write(second)
            pair.client.pump()
            let (bytes, status) = pair.read()
            #expect(status == .blocked(.readable))
            #expect(bytes == first + [0x41, 0x41, 0x41] + second)

            // The answer: OpenSSL sends a KeyUpdate before the response's bytes, and the
            // client reads both.
            let response = pattern(5000, seed: 3)
            evbuffer_add(pair.output, response, response.count)
            #expect(
                pair.transport.write(pair.serverFD, from: pair.output, limit: 1 << 20)
                    == .moved(5000, drained: false))
            #expect(pair.client.read(capacity: 8000) == response)
            #expect(
                pair.client.heard.filter { $0 == 24 }.count == 1,
                "the server's KeyUpdate (handshake type 24), once")

            // And the client's records after the update still open.
            pair.client.write(first)
            pair.client.pump()
            #expect(pair.read().0 == first)
            #expect(pair.transport.failureDescription == nil)
        }
    }

    @Test(arguments: [TLS1_3_VERSION, TLS1_2_VERSION])
    func aChangedRecordEndsTheConnectionWithAnAlert(version: Int32) throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files, version: version)
            pair.client.write(pattern(1000, seed: 1))
            pair.client.write(pattern(1000, seed: 2))
            var records = pair.client.take()
            // Flip a bit in the second record's ciphertext.
            let second = 5 + (Int(records[3]) << 8 | Int(records[4]))
            records[second + 20] ^= 0x01
            pair.client.send(records)
            let (bytes, status) = pair.read()
            #expect(bytes == pattern(1000, seed: 1))
            #expect(status == .failed(code: EPROTO))
            // OpenSSL's first error: the record layer's, or (TLS 1.2) its cipher provider's.
            let reason = try #require(pair.transport.failureDescription)
            let expected = version == TLS1_3_VERSION ? "bad record mac" : "cipher operation failed"
            #expect(reason.contains(expected), "\(reason)")
            #expect(pair.transport.hasBufferedInput == false)
            // The client hears why: a fatal bad_record_mac alert (20).
            _ = pair.client.read()
            #expect(pair.client.alerts == [[2, 20]])
        }
    }

    @Test func closeNotifyEndsTheInputAfterTheData() throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files)
            pair.client.write(pattern(70_000, seed: 4))
            #expect(SSL_shutdown(pair.client.ssl) == 0)
            pair.client.pump()
            let (bytes, status) = pair.read()
            #expect(bytes == pattern(70_000, seed: 4))
            #expect(status == .endOfFile)
            #expect(pair.transport.failureDescription == nil)
        }
    }

    @Test func anEndWithoutCloseNotifyIsAnError() throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files)
            pair.client.write(pattern(1000, seed: 5))
            pair.client.pump()
            shutdown(pair.client.fd, Int32(SHUT_WR))
            let (bytes, status) = pair.read()
            #expect(bytes == pattern(1000, seed: 5))
            #expect(status == .failed(code: EPROTO))
            let reason = try #require(pair.transport.failureDescription)
            #expect(reason.contains("unexpected eof while reading"), "\(reason)")
        }
    }

    /// TLS 1.2 renegotiation asked by the client: the server refuses with a no_renegotiation
    /// warning (100) and delivers what came before.
    @Test func renegotiationIsRefused() throws {
        try Self.withCertificate { files in
            let pair = try Pair(files: files, version: TLS1_2_VERSION)
            pair.client.write(pattern(3000, seed: 6))
            #expect(SSL_renegotiate(pair.client.ssl) == 1)
            #expect(SSL_do_handshake(pair.client.ssl) != 1)
            pair.client.pump()
            let (bytes, status) = pair.read()
            #expect(bytes == pattern(3000, seed: 6))
            #expect(status == .blocked(.readable))
            #expect(SSL_do_handshake(pair.client.ssl) != 1, "the client's renegotiation cannot finish")
            #expect(pair.client.alerts == [[1, 100]])
        }
    }

    /// A fixed-seed generator (SplitMix64), so a failure names the run that fails.
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return value ^ (value >> 31)
        }
    }
}
