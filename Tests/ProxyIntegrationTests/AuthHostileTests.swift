import Foundation
import Testing

/// Tests/Fixtures/hostile-auth (made by scripts/make-auth-hostile-corpus.py): forged, malformed
/// and oversized credentials against routes with `auth:`, and an auth service that answers
/// garbage. Every refused case gets its status and the upstream sees not one connection; each
/// route's control case reaches it, without the credential and with the identity FormGate
/// established rather than the one the client claimed.
@Suite(.serialized) struct AuthHostileTests {
    struct Case: Decodable {
        var family: String
        var name: String
        var file: String
        var status: Int
        var upstream: String
        var reason: String?

        var label: String { "\(family)/\(name)" }
    }

    static let directory = packageRoot.appendingPathComponent("Tests/Fixtures/hostile-auth")
    /// The jwt and cookie routes' secret (scripts/make-auth-hostile-corpus.py's SECRET).
    static let secret = "hostile-secret-0123456789abcdef-0123456789"

    static func cases() throws -> [Case] {
        struct Manifest: Decodable { var cases: [Case] }
        let data = try Data(contentsOf: directory.appendingPathComponent("manifest.json"))
        return try JSONDecoder().decode(Manifest.self, from: data).cases
    }

    static func config(upstream: String, service: Int) -> String {
        let directory = Self.directory.path
        return """
            upstream: \(upstream)
            routes:
              - name: jwt
                match: { path: /jwt }
                auth: { jwt: { secret: "${FG_HOSTILE_SECRET}", issuer: hostile, audience: uploads } }
                multipart: {}
              - name: jwks
                match: { path: /jwks }
                auth: { jwt: { jwks_file: \(directory)/jwks.json, issuer: hostile, audience: uploads } }
                multipart: {}
              - name: cookie
                match: { path: /cookie }
                auth: { jwt: { secret: "${FG_HOSTILE_SECRET}", issuer: hostile, audience: uploads, token_from: { cookie: session } } }
                multipart: {}
              - name: keys
                match: { path: /keys }
                auth: { api_keys: { file: \(directory)/api-keys.txt, header: X-Api-Key } }
                multipart: {}
              - name: service
                match: { path: /service }
                auth: { request: { url: "http://127.0.0.1:\(service)/check", timeout: 1s, forward_headers: [X-Service-Mode], identity_headers: [X-User-Id] } }
                multipart: {}

            """
    }

    @Test func everyForgedCredentialIsRefusedBeforeTheUpstream() throws {
        let cases = try Self.cases()
        #expect(cases.count >= 40)
        let service = try ServerProcess(
            try python3(),
            [UpstreamServerTests.resources.appendingPathComponent("auth_service.py").path])
        defer { service.stop() }
        let upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let path = NSTemporaryDirectory() + "formgate-auth-hostile-\(UUID().uuidString).yaml"
        try
            ("listen: 127.0.0.1:0\nworkers: 1\naccess_log: stdout\n"
            + Self.config(upstream: upstream.url, service: service.port)).write(
                toFile: path, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["FG_HOSTILE_SECRET"] = Self.secret
        let proxy = try ServerProcess(
            formgateBinary, ["run", "-c", path], environment: environment, removingAtStop: [path])
        defer { proxy.stop() }
        // Measured after the first case: the first request opens what stays open (/dev/urandom).
        var baseline = 0
        for (index, testCase) in cases.enumerated() {
            if index == 1 {
                #expect(eventually { proxy.stdoutLineCount >= 1 })
                baseline = proxy.openDescriptors - upstream.openConnections
            }
            let label = testCase.label
            let before = (connections: upstream.connections, bytes: upstream.byteCount)
            let client = try RawClient(port: proxy.port)
            client.send([UInt8](try Data(contentsOf: Self.directory.appendingPathComponent(testCase.file))))
            let reply = String(decoding: client.readAll(timeout: 30), as: UTF8.self)
            #expect(reply.hasPrefix("HTTP/1.1 \(testCase.status) "), "\(label): \(reply.prefix(160))")
            #expect(eventually { proxy.stdoutLineCount > index }, "\(label): no access-log line")
            // The fake answers a whole request, so a relayed reply means it has all of this one.
            let sent = upstream.received(since: before.bytes)
            if testCase.upstream == "nothing" {
                #expect(
                    upstream.connections == before.connections && sent.isEmpty,
                    "\(label): the upstream saw \(sent.utf8.count) bytes")
                if testCase.status == 401 {
                    #expect(reply.contains("\r\nWWW-Authenticate: "), "\(label): no WWW-Authenticate")
                }
            } else {
                #expect(sent.contains("secret upload"), "\(label): the upload did not reach the upstream")
                #expect(
                    !sent.lowercased().contains("authorization:"), "\(label): the credential went upstream")
                #expect(!sent.contains("fg-key-alice"), "\(label): the API key went upstream")
                #expect(
                    !sent.contains("X-User-Id: root"), "\(label): the client's claimed identity went upstream"
                )
                if testCase.family == "service" {
                    #expect(sent.contains("\r\nX-User-Id: svc-alice\r\n"), "\(label): the service's identity")
                }
            }
            #expect(!reply.contains(Self.secret))
        }
        let log = proxy.accessLog(atLeast: cases.count)
        #expect(!proxy.stdout.contains(Self.secret) && !proxy.stderr.contains(Self.secret))
        #expect(!proxy.stdout.contains("fg-key-alice-0123456789abcdef"), "no credential in the access log")
        let identities = Set(log.compactMap { $0["identity"] as? String })
        #expect(identities == ["alice", "svc-alice"], "the subjects of the accepted cases, nothing else")
        // Back at the baseline, give or take the idle upstream connections the pool keeps.
        #expect(
            eventually { proxy.openDescriptors <= baseline + upstream.openConnections },
            "descriptors: \(proxy.openDescriptors) open, baseline \(baseline) + \(upstream.openConnections) pooled"
        )
    }
}
