import Foundation
import Testing

/// Issue 14's independent oracle, end to end: PyJWT (Debian python3-jwt) makes keys and
/// tokens at test time (Tests/ClientAuthTests/Resources/pyjwt_oracle.py, with the clock of this
/// run); FormGate loads the JWKS from a file and judges each token on a real request. Accepted
/// tokens reach the upstream with their upload and without the token; refused ones get 401
/// with `WWW-Authenticate: Bearer error="invalid_token"`, and the recording upstream sees not
/// one connection for them.
@Suite(.serialized) struct JWTOracleTests {
    struct Oracle: Decodable {
        struct Case: Decodable {
            var name: String
            var token: String
            var expect: String
        }
        var issuer: String
        var audience: String
        var leeway: Int
        var cases: [Case]
    }

    static let script = packageRoot.appendingPathComponent("Tests/ClientAuthTests/Resources/pyjwt_oracle.py")
    static let body =
        "--b0undary\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\noracle upload\r\n--b0undary--\r\n"

    @Test func pyjwtTokensAreJudgedBeforeTheUpstream() throws {
        let directory = NSTemporaryDirectory() + "formgate-jwt-oracle-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let output = directory + "/oracle.json"
        let now = Int(Date().timeIntervalSince1970)
        let (status, _) = try run(try python3(), [Self.script.path, output, String(now)])
        #expect(status == 0, "pyjwt_oracle.py failed: python3-jwt and python3-cryptography are required")
        let data = try Data(contentsOf: URL(fileURLWithPath: output))
        let oracle = try JSONDecoder().decode(Oracle.self, from: data)
        let jwks = try jsonObject(data)["jwks"] ?? [:]
        try JSONSerialization.data(withJSONObject: jwks).write(
            to: URL(fileURLWithPath: directory + "/jwks.json"))
        #expect(oracle.cases.count >= 40)
        #expect(
            oracle.cases.contains { $0.expect == "accept" } && oracle.cases.contains { $0.expect != "accept" }
        )

        let upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let proxy = try startProxy(
            """
            upstream: \(upstream.url)
            limits: { header_bytes: 128KiB }
            routes:
              - match: { path: /upload }
                auth: { jwt: { jwks_file: \(directory)/jwks.json, issuer: "\(oracle.issuer)", audience: \(oracle.audience), leeway: \(oracle.leeway)s } }
                multipart: {}

            """, workers: 1)
        defer { proxy.stop() }
        for testCase in oracle.cases {
            let before = (connections: upstream.connections, bytes: upstream.byteCount)
            let client = try RawClient(port: proxy.port)
            client.send(
                "POST /upload HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer \(testCase.token)\r\nContent-Type: multipart/form-data; boundary=b0undary\r\nContent-Length: \(Self.body.utf8.count)\r\nConnection: close\r\n\r\n\(Self.body)"
            )
            let reply = String(decoding: client.readAll(timeout: 30), as: UTF8.self)
            // The fake answers a whole request, so the reply means it has all this one sent.
            let sent = upstream.received(since: before.bytes)
            if testCase.expect == "accept" {
                #expect(reply.hasPrefix("HTTP/1.1 200 "), "\(testCase.name): \(reply.prefix(200))")
                #expect(sent.contains("\r\n\r\noracle upload\r\n"), "\(testCase.name): the upload")
                #expect(!sent.contains(testCase.token), "\(testCase.name): the token went upstream")
            } else {
                #expect(reply.hasPrefix("HTTP/1.1 401 "), "\(testCase.name): \(reply.prefix(200))")
                #expect(reply.contains("\r\nWWW-Authenticate: Bearer"), "\(testCase.name)")
                #expect(
                    upstream.connections == before.connections && upstream.byteCount == before.bytes,
                    "\(testCase.name): the upstream saw \(sent.utf8.count) bytes")
            }
        }
        let lines = proxy.accessLog(atLeast: oracle.cases.count)
        let accepted = lines.filter { ($0["status"] as? Int) == 200 }
        #expect(accepted.count == oracle.cases.filter { $0.expect == "accept" }.count)
        #expect(accepted.allSatisfy { ($0["identity"] as? String) == "user-42" })
        #expect(!proxy.stdout.contains(oracle.cases[0].token), "no token in the access log")
    }
}
