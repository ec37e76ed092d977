import Config
import Foundation
import ProxyCore
import Testing

@Suite struct ConfigLoaderTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theDefaultConfigurationLoads() throws {
        let config = try ConfigLoader.load(path: Self.root.appendingPathComponent("conf/formgate.yaml").path)
            .get()
        #expect(config.listen == "127.0.0.1:8080")
        #expect(config.upstream == UpstreamURL(scheme: .http, host: "127.0.0.1", port: 9000))
        #expect(config.limits.headerBytes == 32 * 1024)
        #expect(config.limits.bodyBytes == 4 << 30)
        #expect(config.routes.map(\.name) == ["uploads", "uploads-buffered"])
        #expect(config.routes[0].methods == ["POST", "PUT"])
        #expect(config.routes[1].requestBody == .buffer)
        #expect(config.routes[0].setHeaders.first?.0 == "X-Upload-Proxy")
    }

    @Test(arguments: ["formgate.yaml", "qiniu.yaml", "legacy-php.yaml", "audit-only.yaml"])
    func shippedConfigurationsLoad(file: String) throws {
        let environment = ["QINIU_AK": "ak", "QINIU_SK": "sk", "QINIU_BUCKET": "photos"]
        let result = ConfigLoader.load(
            path: Self.root.appendingPathComponent("conf/\(file)").path, environment: environment)
        if case .failure(let errors) = result { Issue.record("\(errors)") }
        let config = try result.get()
        #expect(!config.routes.isEmpty)
        #expect(config.routes.allSatisfy { $0.rewritesMultipart })
    }

    @Test func everyErrorIsReportedWithItsPlace() {
        let text = """
            listen: nope
            workers: 0
            limits: { parts: x, file_bytes: 3QB }
            routes:
              - match: { path: upload, methods: [post] }
                request_bodyy: stream
            timeouts: { idle: 5 }
            upstream: ftp://x
            """
        guard case .failure(let errors) = ConfigLoader.load(text: text, file: "f.yaml") else {
            Issue.record("accepted a bad file")
            return
        }
        let lines = errors.errors.map(\.description)
        #expect(lines.contains("f.yaml:1:9: listen: expected HOST:PORT, found 'nope'"))
        #expect(lines.contains("f.yaml:2:10: workers: expected a whole number in 1...256, found '0'"))
        #expect(lines.contains { $0.hasPrefix("f.yaml:3:33: limits.file_bytes:") })
        #expect(lines.contains { $0.hasPrefix("f.yaml:6:5: routes[0].request_bodyy: unknown key") })
        #expect(lines.contains("f.yaml:5:20: routes[0].match.path: a path prefix starts with /"))
        #expect(lines.contains { $0.hasPrefix("f.yaml:7:19: timeouts.idle:") })
        #expect(lines.contains { $0.hasPrefix("f.yaml:8:11: upstream:") })
        #expect(
            lines.contains("f.yaml:5:37: routes[0].match.methods: 'post' is not an upper-case method name"))
        #expect(errors.errors.count == 9)
    }

    @Test func syntaxErrorsHaveAPosition() {
        guard case .failure(let errors) = ConfigLoader.load(text: "listen: [a\n", file: "s.yaml") else {
            Issue.record("accepted")
            return
        }
        #expect(errors.errors.first?.description.hasPrefix("s.yaml:2:1: ") == true)
    }

    @Test func environmentSizesAndDurations() throws {
        let text = """
            upstream: https://${HOST}:8443
            timeouts: { header: 500ms, idle: 2m, upstream_connect: 1s, upstream_response: 1h, body_total: 90s }
            limits: { field_bytes: 16KiB, file_bytes: 2GB, body_bytes: 1024 }
            workers: auto
            """
        let config = try ConfigLoader.load(text: text, file: "e.yaml", environment: ["HOST": "up.example"])
            .get()
        #expect(config.upstream.description == "https://up.example:8443")
        #expect(config.timeouts.header == 500)
        #expect(config.timeouts.idle == 120_000)
        #expect(config.timeouts.upstreamResponse == 3_600_000)
        #expect(config.timeouts.bodyTotal == 90_000)
        #expect(Timeouts().bodyTotal == 0)
        #expect(config.limits.fieldBytes == 16 * 1024)
        #expect(config.limits.fileBytes == 2_000_000_000)
        #expect(config.limits.bodyBytes == 1024)
        #expect(config.workers == 0)
        guard
            case .failure(let missing) = ConfigLoader.load(text: "upstream: http://${NOPE}\n", file: "m.yaml")
        else {
            Issue.record("accepted an unset variable")
            return
        }
        #expect(missing.errors.first?.message == "environment variable NOPE is not set")
    }

    @Test func routeMatching() {
        var config = ServerConfig()
        config.routes = [
            Route(pathPrefix: "/"), Route(pathPrefix: "/upload"),
            Route(pathPrefix: "/upload", host: "a.example"),
            Route(pathPrefix: "/upload/big"),
        ]
        #expect(config.route(path: "/upload", host: "b")?.pathPrefix == "/upload")
        #expect(config.route(path: "/upload", host: "a.example:8080")?.host == "a.example")
        #expect(config.route(path: "/upload/big/x", host: nil)?.pathPrefix == "/upload/big")
        #expect(config.route(path: "/uploads", host: nil)?.pathPrefix == "/")
    }

    @Test func upstreamURLs() {
        #expect(UpstreamURL(parsing: "http://a")?.port == 80)
        #expect(UpstreamURL(parsing: "https://a")?.port == 443)
        #expect(UpstreamURL(parsing: "http://[::1]:9000")?.host == "::1")
        #expect(UpstreamURL(parsing: "http://[::1]:9000")?.authority == "[::1]:9000")
        #expect(UpstreamURL(parsing: "http://a/path") == nil)
        #expect(UpstreamURL(parsing: "http://u@a") == nil)
        #expect(UpstreamURL(parsing: "http://a:99999") == nil)
    }
}
