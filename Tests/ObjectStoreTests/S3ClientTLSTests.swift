import Foundation
import Resumable
import Testing

@testable import ObjectStore

/// An https endpoint is verified against the system's trust store: a self-signed certificate
/// (here `openssl s_server`'s, which would answer any HTTP request) is refused at the
/// handshake, and the error says so without any credential.
@Suite struct S3ClientTLSTests {
    @Test func aSelfSignedEndpointIsRefused() throws {
        let directory = NSTemporaryDirectory() + "formgate-s3-tls-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let made = Process()
        made.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        made.arguments = [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-addext",
            "subjectAltName=IP:127.0.0.1", "-days", "1", "-keyout", "\(directory)/key.pem", "-out",
            "\(directory)/cert.pem",
        ]
        made.standardOutput = FileHandle.nullDevice
        made.standardError = FileHandle.nullDevice
        try made.run()
        made.waitUntilExit()
        #expect(made.terminationStatus == 0, "openssl req")
        let port = try freePort()
        let server = try Child(
            "/usr/bin/openssl",
            [
                "s_server", "-accept", "127.0.0.1:\(port)", "-cert", "\(directory)/cert.pem", "-key",
                "\(directory)/key.pem", "-www", "-quiet",
            ])
        _ = server
        #expect(eventually(within: 30) { accepts(port) }, "openssl s_server listens")
        let client = S3Client(
            settings: ObjectStoreSettings(
                scheme: "https", host: "127.0.0.1", port: port, bucket: "tus-store", region: "us-east-1",
                prefix: "", accessKey: "AKIDTLS", secretKey: "secret-never-shown"))
        do {
            _ = try client.size("anything")
            Issue.record("a self-signed certificate was accepted")
        } catch {
            let text = "\(error)"
            #expect(text.contains("TLS handshake with 127.0.0.1"), "\(text)")
            #expect(!text.contains("secret-never-shown") && !text.contains("AKIDTLS"), "\(text)")
        }
    }
}
