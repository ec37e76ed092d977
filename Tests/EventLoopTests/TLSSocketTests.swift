import CCrypto
import CLibevent
import Foundation
import Testing

@testable import EventLoop

/// TLS through the same socket code: an in-process server (`TLSServerContext`, a
/// self-signed certificate made by the test with Debian's `openssl`) and a client
/// (`TLSClientContext`) on one loop, over loopback TCP.
@Suite struct TLSSocketTests {
    /// A self-signed certificate for `localhost` and its key, in a fresh directory.
    static func makeCertificate() throws -> (directory: String, cert: String, key: String) {
        let openssl = ["/usr/bin/openssl", "/bin/openssl"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
        let tool = try #require(openssl, "openssl is not installed (apt-get install openssl)")
        let directory = NSTemporaryDirectory() + "formgate-eventloop-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let cert = directory + "/cert.pem"
        let key = directory + "/key.pem"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost",
        ]
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "openssl req failed")
        return (directory, cert, key)
    }

    /// A listener whose accepted sockets run TLS and are recorded.
    final class Server {
        let listener: Listener
        var accepted: [Recorder] = []

        init(harness: LoopHarness, context: TLSServerContext, configure: @escaping (Recorder) -> Void) throws
        {
            var accepted: (Recorder) -> Void = { _ in }
            listener = try Listener(
                base: harness.base, address: try SocketAddress(parsing: "127.0.0.1:0"), reusePort: false
            ) { fd, _ in
                guard let socket = try? BufferedSocket.accepted(base: harness.base, fd: fd, tls: context)
                else {
                    return
                }
                accepted(Recorder(harness: harness, socket: socket))
            }
            accepted = { [unowned self] recorder in
                configure(recorder)
                recorder.socket.enable()
                self.accepted.append(recorder)
            }
        }

        var port: Int { listener.boundAddress?.port ?? 0 }
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        _ = bytes.withUnsafeBytes {
            SHA256($0.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, &digest)
        }
        return digest
    }

    @Test func aLargeTransferBothWaysAndACleanClose() throws {
        let files = try Self.makeCertificate()
        defer { try? FileManager.default.removeItem(atPath: files.directory) }
        let harness = try LoopHarness()
        let upload = pattern(12 << 20, seed: 11)
        let download = pattern(6 << 20, seed: 12)
        // The server answers once the whole upload is in; its input is capped by a watermark
        // (TLS records buffered in OpenSSL must still be delivered after each pause).
        let server = try Server(
            harness: harness,
            context: try TLSServerContext(certificateFile: files.cert, keyFile: files.key)
        ) { recorder in
            recorder.socket.setWatermarks(readHigh: 40_000, writeLow: 0)
            recorder.onReadable = { recorder in
                if recorder.received.count == upload.count { recorder.socket.output.add(download) }
            }
        }
        let client = Recorder(harness: harness)
        client.onEvents = { recorder, events in
            guard events.contains(.connected) else { return }
            recorder.socket.enable()
            recorder.socket.output.add(upload)
        }
        client.adopt(
            try BufferedSocket.connect(
                base: harness.base, host: "localhost", port: server.port,
                tls: try TLSClientContext(caFile: files.cert), delegate: client))
        #expect(harness.run { client.received.count >= download.count })
        let peer = try #require(server.accepted.first)
        #expect(peer.received.count == upload.count)
        #expect(Self.sha256(peer.received) == Self.sha256(upload))
        #expect(client.received == download)
        #expect(client.socket.isTLS && peer.socket.isTLS)
        #expect(client.socket.tlsError == nil)

        // close() sends close_notify: the server sees a clean end of file, not an error.
        client.socket.close()
        #expect(harness.run { peer.events.count == 2 })
        #expect(peer.events == [.connected, [.reading, .endOfFile]])
        peer.socket.close()
    }

    @Test func anUntrustedCertificateFailsTheHandshake() throws {
        let files = try Self.makeCertificate()
        defer { try? FileManager.default.removeItem(atPath: files.directory) }
        let harness = try LoopHarness()
        let server = try Server(
            harness: harness, context: try TLSServerContext(certificateFile: files.cert, keyFile: files.key)
        ) { _ in }
        // The system store does not know the test certificate.
        let client = Recorder(harness: harness)
        client.adopt(
            try BufferedSocket.connect(
                base: harness.base, host: "localhost", port: server.port, tls: try TLSClientContext(),
                delegate: client))
        #expect(harness.run { !client.events.isEmpty })
        #expect(client.events == [.error])
        let reason = try #require(client.socket.tlsError)
        #expect(reason.contains("certificate verify failed"), "\(reason)")
        client.socket.close()
        for recorder in server.accepted { recorder.socket.close() }
    }

    @Test func aKeyThatIsMissingIsAnError() throws {
        #expect(throws: EventLoopError.self) {
            try TLSServerContext(certificateFile: "/nonexistent/cert.pem", keyFile: "/nonexistent/key.pem")
        }
    }
}

/// File segments (`evbuffer_add_file`, the proxy's spooled bodies) go out whole over both
/// transports: sendfile on plain sockets, mapped and encrypted over TLS.
@Suite struct FileSegmentTests {
    static func file(_ bytes: [UInt8]) throws -> (path: String, fd: Int32) {
        let path = NSTemporaryDirectory() + "formgate-eventloop-segment-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        #expect(fd >= 0)
        return (path, fd)
    }

    @Test(arguments: [false, true])
    func aFileSegmentArrivesWhole(tls: Bool) throws {
        let certificate = try TLSSocketTests.makeCertificate()
        defer { try? FileManager.default.removeItem(atPath: certificate.directory) }
        let harness = try LoopHarness()
        let content = pattern(3 << 20, seed: 21)
        let (path, fd) = try Self.file(content)
        defer { try? FileManager.default.removeItem(atPath: path) }
        var accepted: Recorder?
        let listener = try Listener(
            base: harness.base, address: try SocketAddress(parsing: "127.0.0.1:0"), reusePort: false
        ) { fd, _ in
            let context =
                tls ? try? TLSServerContext(certificateFile: certificate.cert, keyFile: certificate.key) : nil
            guard let socket = try? BufferedSocket.accepted(base: harness.base, fd: fd, tls: context) else {
                return
            }
            accepted = Recorder(harness: harness, socket: socket)
            accepted?.socket.enable()
        }
        let port = try #require(listener.boundAddress?.port)
        let client = Recorder(harness: harness)
        client.onEvents = { recorder, events in
            guard events.contains(.connected) else { return }
            // From offset 1000 to the end, as the proxy skips a spool's leading bytes.
            #expect(evbuffer_add_file(recorder.socket.output.raw, fd, 1000, Int64(content.count - 1000)) == 0)
        }
        client.adopt(
            try BufferedSocket.connect(
                base: harness.base, host: "localhost", port: port,
                tls: tls ? try TLSClientContext(caFile: certificate.cert) : nil, delegate: client))
        #expect(harness.run { (accepted?.received.count ?? 0) >= content.count - 1000 })
        #expect(accepted?.received == Array(content[1000...]))
        client.socket.close()
        accepted?.socket.close()
    }
}
