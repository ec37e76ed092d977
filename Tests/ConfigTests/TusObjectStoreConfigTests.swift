import Config
import Foundation
import ProxyCore
import Resumable
import Testing

/// `tus.store: { s3: { … } }`: its keys, defaults, secrets from files, and the `redis:` it needs.
@Suite struct TusObjectStoreConfigTests {
    static func route(_ s3: String) -> String {
        """
        routes:
          - name: resumable
            match: { path: /files }
            tus:
              store: { s3: { \(s3) } }
              deliver: { path: /upload }
        """
    }

    @Test func anS3StoreLoadsWithItsSettings() throws {
        let secret = NSTemporaryDirectory() + "formgate-s3-secret-\(UUID().uuidString)"
        try "s3cr3t/key\n".write(toFile: secret, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: secret) }
        let text =
            "redis: redis://127.0.0.1:6379/0\n"
            + Self.route(
                "endpoint: https://s3.example.com:9000, bucket: up-loads, region: eu-west-1, prefix: tus/, "
                    + "access_key: AKID, secret_key_file: \(secret), session_token: tok, part_size: 16MiB, "
                    + "lock_ttl: 5s")
        let config = try ConfigLoader.load(text: text, file: "t.yaml").get()
        let tus = try #require(config.routes.first?.tus)
        let s3 = try #require(tus.objectStore)
        #expect(s3.scheme == "https" && s3.host == "s3.example.com" && s3.port == 9000)
        #expect(s3.bucket == "up-loads" && s3.region == "eu-west-1" && s3.prefix == "tus/")
        #expect(s3.accessKey == "AKID" && s3.secretKey == "s3cr3t/key" && s3.sessionToken == "tok")
        #expect(s3.partSize == 16 << 20)
        #expect(s3.lockMilliseconds == 5000)
        // The store's name (its service, the log) holds no credential.
        #expect(tus.store == "s3:https://s3.example.com:9000/up-loads/tus/")
        #expect(!"\(s3)".contains("s3cr3t") && !"\(s3)".contains("tok"))
    }

    @Test func theDefaults() throws {
        let text =
            "redis: redis://127.0.0.1:6379/0\n"
            + Self.route("endpoint: http://127.0.0.1:9000, bucket: tus, access_key: a, secret_key: b")
        let s3 = try #require(
            try ConfigLoader.load(text: text, file: "t.yaml").get().routes.first?.tus?.objectStore)
        #expect(s3.region == "us-east-1" && s3.prefix == "" && s3.sessionToken == nil)
        #expect(s3.partSize == 8 << 20)
        #expect(s3.lockMilliseconds == 30_000)
        #expect(s3.hostHeader == "127.0.0.1:9000")
    }

    @Test func anS3StoreNeedsRedis() {
        let text = Self.route("endpoint: http://127.0.0.1:9000, bucket: tus, access_key: a, secret_key: b")
        guard case .failure(let errors) = ConfigLoader.load(text: text, file: "t.yaml") else {
            Issue.record("accepted an s3 store without redis:")
            return
        }
        let lines = errors.errors.map(\.description)
        #expect(
            lines.contains { $0.contains("routes[0].tus.store.s3: an s3 store needs redis:") }, "\(lines)")
    }

    @Test func maxSizeMustFitInTenThousandParts() {
        let text =
            "redis: redis://127.0.0.1:6379\n"
            + Self.route(
                "endpoint: http://127.0.0.1:9000, bucket: tus, access_key: a, secret_key: b, part_size: 5MiB"
            )
            .replacingOccurrences(of: "      deliver:", with: "      max_size: 100GiB\n      deliver:")
        guard case .failure(let errors) = ConfigLoader.load(text: text, file: "t.yaml") else {
            Issue.record("accepted 100 GiB in 10,000 parts of 5 MiB")
            return
        }
        let lines = errors.errors.map(\.description)
        #expect(lines.count == 1 && lines[0].contains("routes[0].tus.max_size"), "\(lines)")
        #expect(lines[0].contains("raise part_size to at least 10737419 bytes"), "\(lines)")
    }

    @Test func mistakesAreReportedWithTheirPlace() {
        let text =
            "redis: redis://127.0.0.1:6379/0\n"
            + Self.route(
                "endpoint: ftp://x, bucket: No_Such, part_size: 1MiB, lock_ttl: 10ms, prefix: /abs, "
                    + "secret_key: visible-secret, color: blue")
        guard case .failure(let errors) = ConfigLoader.load(text: text, file: "t.yaml") else {
            Issue.record("accepted a bad s3 store")
            return
        }
        let lines = errors.errors.map(\.description)
        for expected in [
            "routes[0].tus.store.s3.endpoint: expected http(s)://HOST[:PORT]",
            "routes[0].tus.store.s3.bucket: not a bucket name",
            "routes[0].tus.store.s3.part_size: must be from 5MiB",
            "routes[0].tus.store.s3.lock_ttl: must be from 1s to 10m",
            "routes[0].tus.store.s3.prefix: a key prefix without control characters or a leading /",
            "routes[0].tus.store.s3.access_key: an s3 store needs access_key",
            "routes[0].tus.store.s3.color: unknown key",
        ] {
            #expect(lines.contains { $0.contains(expected) }, "\(expected): \(lines)")
        }
        #expect(!lines.contains { $0.contains("visible-secret") }, "no error repeats a secret: \(lines)")
    }

    @Test(arguments: [
        ("http://127.0.0.1:9000", "http", "127.0.0.1", 9000),
        ("https://s3.amazonaws.com/", "https", "s3.amazonaws.com", 443),
        ("http://[::1]:8080", "http", "::1", 8080),
    ])
    func endpoints(_ text: String, _ scheme: String, _ host: String, _ port: Int) {
        let parsed = ObjectStoreSettings.endpoint(text)
        #expect(parsed?.scheme == scheme && parsed?.host == host && parsed?.port == port)
    }

    @Test(arguments: ["s3.example.com", "http://", "http://a:0", "http://a/b", "http://u@a", "http://a:x"])
    func badEndpoints(_ text: String) {
        #expect(ObjectStoreSettings.endpoint(text) == nil)
    }

    /// The README's example loads as written (its secret files supplied).
    @Test func theReadmeExampleLoads() throws {
        let readme = try String(
            contentsOf: DeployFilesTests.root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "redis: { url: redis://10.0.0.5:6379/0, password_file"))
        let end = try #require(readme[start.lowerBound...].range(of: "```"))
        let directory = NSTemporaryDirectory() + "formgate-readme-s3-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in ["redis", "s3"] {
            try "readme-\(name)\n".write(toFile: "\(directory)/\(name)", atomically: true, encoding: .utf8)
        }
        let text = String(readme[start.lowerBound..<end.lowerBound])
            .replacingOccurrences(of: "/run/secrets", with: directory)
        let config = try ConfigLoader.load(text: text, file: "README.md").get()
        let s3 = try #require(config.routes.first?.tus?.objectStore)
        #expect(s3.bucket == "uploads" && s3.prefix == "tus/" && s3.secretKey == "readme-s3")
        #expect(s3.partSize == 8 << 20 && s3.lockMilliseconds == 30_000)
    }
}
