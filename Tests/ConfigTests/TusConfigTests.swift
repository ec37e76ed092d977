import Config
import Foundation
import ProxyCore
import Resumable
import Testing

/// A route's `tus:` section: its keys, defaults and the checks on the rest of the route.
@Suite struct TusConfigTests {
    @Test func aTusRouteLoadsWithItsSettings() throws {
        let text = """
            routes:
              - name: resumable
                match: { path: /files }
                tus:
                  store: /var/tmp/fg-tus
                  max_size: 2GiB
                  expire_after: 2h
                  trust_forwarded: true
                  deliver: { path: /upload.php, file_field: upload, fields: [title, album] }
                multipart: { filename: "{uuid}{ext}" }
            """
        let config = try ConfigLoader.load(text: text, file: "t.yaml").get()
        let tus = try #require(config.routes.first?.tus)
        #expect(tus.store == "/var/tmp/fg-tus")
        #expect(tus.maxSize == 2 << 30)
        #expect(tus.expireAfterMilliseconds == 7_200_000)
        #expect(tus.trustForwarded)
        #expect(tus.deliverPath == "/upload.php")
        #expect(tus.fileField == "upload")
        #expect(tus.fields == ["title", "album"])
    }

    @Test func theDefaultsAreTheContract() throws {
        let text = """
            routes:
              - match: { path: /files }
                tus: { deliver: { path: /upload } }
            """
        let tus = try #require(try ConfigLoader.load(text: text, file: "t.yaml").get().routes.first?.tus)
        #expect(tus.store == "/var/lib/formgate/tus")
        #expect(tus.maxSize == 4 << 30)
        #expect(tus.expireAfterMilliseconds == 24 * 3_600_000)
        #expect(tus.fileField == "file")
        #expect(tus.fields.isEmpty)
        #expect(!tus.trustForwarded)
    }

    @Test func mistakesAreReportedWithTheirPlace() {
        let text = """
            routes:
              - match: { path: /files, methods: [POST] }
                tus:
                  max_size: 0
                  expire_after: 10ms
                  deliver: { path: upload, file_field: "" }
                  color: blue
                multipart: { drop_fields: [file] }
            """
        guard case .failure(let errors) = ConfigLoader.load(text: text, file: "t.yaml") else {
            Issue.record("accepted a bad tus section")
            return
        }
        let lines = errors.errors.map(\.description)
        #expect(lines.contains { $0.contains("routes[0].tus.max_size: must be more than 0") }, "\(lines)")
        #expect(lines.contains { $0.contains("routes[0].tus.expire_after: must be at least 1s") }, "\(lines)")
        #expect(
            lines.contains { $0.contains("routes[0].tus.deliver.path: expected an upstream path") },
            "\(lines)")
        #expect(
            lines.contains { $0.contains("routes[0].tus.deliver.file_field: not a field name") }, "\(lines)")
        #expect(lines.contains { $0.contains("routes[0].tus.color: unknown key") }, "\(lines)")
        #expect(
            lines.contains { $0.contains("routes[0].match.methods: a tus route answers its own methods") },
            "\(lines)")
        #expect(lines.contains { $0.contains("drop_fields drops 'file'") }, "\(lines)")
    }

    @Test func aTusRouteNeedsADeliveryPath() {
        let text = """
            routes:
              - match: { path: /files }
                tus: { store: /tmp/x }
            """
        guard case .failure(let errors) = ConfigLoader.load(text: text, file: "t.yaml") else {
            Issue.record("accepted a tus route without deliver.path")
            return
        }
        #expect(
            errors.errors.map(\.description).contains {
                $0.contains("tus.deliver.path: a tus route needs deliver")
            })
    }
}

/// The README's two tus routes load as written (their secret files supplied).
@Suite struct ReadmeTusRoutesTests {
    @Test func theReadmeTusRoutesLoad() throws {
        let readme = try String(
            contentsOf: DeployFilesTests.root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "routes:\n  - name: resumable\n"))
        let end = try #require(readme[start.lowerBound...].range(of: "```"))
        let directory = NSTemporaryDirectory() + "formgate-readme-tus-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "qiniu-secret\n".write(toFile: "\(directory)/qiniu_sk", atomically: true, encoding: .utf8)
        try "alice: \(String(repeating: "ab", count: 32))\n".write(
            toFile: "\(directory)/api_keys", atomically: true, encoding: .utf8)
        let routes = String(readme[start.lowerBound..<end.lowerBound])
            .replacingOccurrences(of: "/run/secrets", with: directory)
        let config = try ConfigLoader.load(text: routes, file: "README.md", environment: ["QINIU_AK": "ak"])
            .get()
        #expect(config.warnings.isEmpty, "\(config.warnings)")
        #expect(config.routes.map(\.name) == ["resumable", "resumable-qiniu"])
        #expect(config.routes.map { $0.tus?.deliverPath } == ["/upload.php", "/"])
        #expect(config.routes[0].authMethod == "api_key" || config.routes[0].authMethod == "api_keys")
        #expect(config.routes[1].rules.inject.count == 2)
    }
}
