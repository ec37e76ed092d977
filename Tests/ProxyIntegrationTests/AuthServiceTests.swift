import Foundation
import Testing

/// `auth: { request: … }` against a real (Python) auth service: it allows with identity
/// headers, denies with 401 and 403 (its body reaches the client), answers too late or not at
/// all (503, nothing upstream), and its allowing answers are cached per credential.
@Suite(.serialized) struct AuthServiceTests {
    static let body =
        "--b0undary\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nservice upload\r\n--b0undary--\r\n"

    /// The Python service and a proxy in front of a recording upstream.
    struct Setup {
        let service: ServerProcess
        let upstream: FakeUpstream
        let proxy: ServerProcess

        init(extraRoutes: String = "") throws {
            service = try ServerProcess(
                try python3(), [UpstreamServerTests.resources.appendingPathComponent("auth_service.py").path])
            upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
            proxy = try startProxy(
                """
                upstream: \(upstream.url)
                admin: 127.0.0.1:0
                routes:
                  - name: checked
                    match: { path: /upload }
                    auth: { request: { url: "http://127.0.0.1:\(service.port)/check", timeout: 1s, identity_headers: [X-User-Id, X-User-Role], forward_headers: [Authorization, X-Service-Mode] } }
                    multipart:
                      inject: [{ name: role, value: "{auth:X-User-Role}" }, { name: who, value: "{auth:sub}" }]
                  - name: cached
                    match: { path: /cached }
                    auth: { request: { url: "http://127.0.0.1:\(service.port)/check", cache_ttl: 1h } }
                  - name: down
                    match: { path: /down }
                    auth: { request: { url: "http://127.0.0.1:\(closedPort())/check", timeout: 1s } }
                  - name: lenient
                    match: { path: /lenient }
                    auth: { request: { url: "http://127.0.0.1:\(closedPort())/check", timeout: 1s, on_error: allow } }
                \(extraRoutes)
                """, workers: 2)
        }

        func stop() {
            proxy.stop()
            service.stop()
        }

        /// Sends one upload and returns the raw reply and what the upstream received for it.
        func send(_ path: String, _ headers: String = "") throws -> (reply: String, upstream: String) {
            let before = upstream.byteCount
            let client = try RawClient(port: proxy.port)
            client.send(
                "POST \(path) HTTP/1.1\r\nHost: test\r\n\(headers)Content-Type: multipart/form-data; boundary=b0undary\r\nContent-Length: \(AuthServiceTests.body.utf8.count)\r\nConnection: close\r\n\r\n\(AuthServiceTests.body)"
            )
            let reply = String(decoding: client.readAll(timeout: 30), as: UTF8.self)
            // The fake answers a whole request: after the reply it has all this one sent.
            return (reply, upstream.received(since: before))
        }

        /// A GET to the service's own bookkeeping (`/_count`, `/_last`).
        func service(_ path: String) throws -> String {
            let client = try RawClient(port: service.port)
            client.send("GET \(path) HTTP/1.1\r\nHost: svc\r\nConnection: close\r\n\r\n")
            let reply = String(decoding: client.readAll(timeout: 30), as: UTF8.self)
            return String(reply.split(separator: "\r\n\r\n", maxSplits: 1).last ?? "")
        }
    }

    @Test func anAllowingAnswerBecomesTheIdentity() throws {
        let setup = try Setup()
        defer { setup.stop() }
        let (reply, upstream) = try setup.send(
            "/upload/photos?album=1",
            "Authorization: Bearer bob\r\nX-User-Id: root\r\nX-Service-Mode: allow\r\n")
        #expect(reply.hasPrefix("HTTP/1.1 200 "), "\(reply.prefix(200))")
        #expect(upstream.contains("\r\n\r\nservice upload\r\n"))
        #expect(upstream.contains("\r\nX-User-Id: bob\r\n"), "the service's identity, not the client's")
        #expect(!upstream.contains("X-User-Id: root"))
        #expect(upstream.contains("name=\"role\"\r\n\r\nuploader\r\n"), "{auth:X-User-Role}")
        #expect(upstream.contains("name=\"who\"\r\n\r\nbob\r\n"), "{auth:sub}")
        let subrequest = try setup.service("/_last")
        #expect(subrequest.hasPrefix("POST /check/upload/photos?album=1 HTTP/1.1\r\n"), "\(subrequest)")
        #expect(subrequest.contains("\r\nAuthorization: Bearer bob"))
        #expect(!subrequest.contains("Content-Type: multipart"), "never the body or its type")
        #expect(!subrequest.contains("X-User-Id: root"), "a header not listed is not forwarded")
        let log = setup.proxy.accessLog(atLeast: 1)
        #expect(log.first?["identity"] as? String == "bob")
    }

    @Test(arguments: [
        ("deny-401", 401, "{\"error\":\"login required\"}"), ("deny-403", 403, "forbidden by policy\n"),
    ])
    func denialsAreRelayedWithTheirBody(mode: String, status: Int, body: String) throws {
        let setup = try Setup()
        defer { setup.stop() }
        let (reply, upstream) = try setup.send("/upload", "X-Service-Mode: \(mode)\r\n")
        #expect(reply.hasPrefix("HTTP/1.1 \(status) "), "\(reply.prefix(200))")
        #expect(reply.hasSuffix("\r\n\r\n" + body), "the service's body reaches the client")
        if status == 401 { #expect(reply.contains("\r\nWWW-Authenticate: Bearer realm=\"svc\"\r\n")) }
        #expect(upstream.isEmpty)
        #expect(setup.upstream.connections == 0)
    }

    @Test(arguments: ["/upload|slow", "/down|allow", "/upload|garbage"])
    func aSilentOrBrokenServiceFailsClosed(_ spec: String) throws {
        let setup = try Setup()
        defer { setup.stop() }
        let parts = spec.split(separator: "|").map(String.init)
        let (reply, upstream) = try setup.send(parts[0], "X-Service-Mode: \(parts[1])\r\n")
        #expect(reply.hasPrefix("HTTP/1.1 503 "), "\(spec): \(reply.prefix(200))")
        #expect(upstream.isEmpty && setup.upstream.connections == 0)
    }

    @Test func onErrorAllowLetsTheRequestThroughWithoutAnIdentity() throws {
        let setup = try Setup()
        defer { setup.stop() }
        let (reply, upstream) = try setup.send("/lenient")
        #expect(reply.hasPrefix("HTTP/1.1 200 "), "\(reply.prefix(200))")
        #expect(upstream.contains("\r\n\r\nservice upload\r\n"))
    }

    @Test func theCacheAsksOnceForOneCredential() throws {
        let setup = try Setup()
        defer { setup.stop() }
        for _ in 0..<10 {
            let (reply, _) = try setup.send("/cached", "Authorization: Bearer carol\r\n")
            #expect(reply.hasPrefix("HTTP/1.1 200 "), "\(reply.prefix(200))")
        }
        #expect(try setup.service("/_count") == "1", "ten requests, one question to the service")
        _ = try setup.send("/cached", "Authorization: Bearer dave\r\n")
        #expect(try setup.service("/_count") == "2", "another credential asks again")
        #expect(setup.upstream.connections >= 1)
    }
}

/// A port nothing listens on (bound, then closed).
func closedPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    var bound = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &bound) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    close(fd)
    return Int(UInt16(bigEndian: bound.sin_port))
}
