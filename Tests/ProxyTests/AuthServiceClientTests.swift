import EventLoop
import HTTP1
import ProxyCore
import Testing

@testable import Proxy

#if canImport(Glibc)
    import Glibc
#endif

/// The auth-service client against a real (Python) service on a real loop: each answer the
/// service can give, and the subrequest it saw.
@Suite struct AuthServiceClientTests {
    let service: AuthServiceProcess
    let runner: CheckRunner

    init() throws {
        service = try AuthServiceProcess()
        runner = try CheckRunner()
    }

    func settings(timeout: Int64 = 30_000, identity: [String] = ["X-User-Id", "X-Scope", "X-Missing"])
        throws -> AuthServiceSettings
    {
        let parsed = try #require(AuthServiceSettings.parseURL("http://127.0.0.1:\(service.port)/check/"))
        return AuthServiceSettings(
            target: parsed.target, pathPrefix: parsed.pathPrefix, timeoutMilliseconds: timeout,
            identityHeaders: identity)
    }

    @Test func twoHundredAllowsWithTheListedHeaders() throws {
        let request = clientRequest(
            "POST", "/allow/photos?album=3&name=a%20b",
            [
                ("Host", "uploads.example"), ("Authorization", "Bearer tok123"),
                ("Content-Type", "multipart/form-data; boundary=x"),
                ("Content-Length", "1000"), ("Cookie", "s=1"), ("X-Forwarded-For", "203.0.113.9"),
                ("X-Client-Only", "not forwarded"), ("Cookie", "t=2"),
            ])
        let verdict = runner.check(request, settings: try settings(), clientTLS: true)
        #expect(
            verdict
                == .allowed(identity: [
                    .init(name: "X-User-Id", value: "user-tok123"), .init(name: "X-Scope", value: "photos"),
                ]))
        let seen = try #require(service.requests.first)
        #expect(service.requests.count == 1)
        #expect(seen.method == "POST")
        #expect(seen.path == "/check/allow/photos?album=3&name=a%20b")
        #expect(seen.bodyBytes == 0)
        let expected: [(String, String)] = [
            ("Host", "127.0.0.1:\(service.port)"), ("Authorization", "Bearer tok123"), ("Cookie", "s=1"),
            ("Cookie", "t=2"), ("X-Forwarded-For", "192.0.2.7"), ("X-Forwarded-Method", "POST"),
            ("X-Forwarded-Uri", "/allow/photos?album=3&name=a%20b"), ("X-Forwarded-Host", "uploads.example"),
            ("X-Forwarded-Proto", "https"), ("Content-Length", "0"), ("Connection", "close"),
        ]
        #expect(seen.headers.map(\.name) == expected.map(\.0))
        #expect(seen.headers.map(\.value) == expected.map(\.1))
    }

    @Test func theOriginalMethodIsUsed() throws {
        for method in ["GET", "PUT", "DELETE"] {
            #expect(runner.check(clientRequest(method, "/allow", []), settings: try settings()) != nil)
        }
        #expect(service.requests.map(\.method) == ["GET", "PUT", "DELETE"])
        #expect(service.requests.allSatisfy { $0.values("X-Forwarded-Host").isEmpty })
        #expect(service.requests.allSatisfy { $0.values("Authorization").isEmpty && $0.bodyBytes == 0 })
    }

    @Test func fourOhOneIsRelayedWithItsBodyAndOnlyItsAuthenticationHeaders() throws {
        let verdict = runner.check(clientRequest("POST", "/deny401", []), settings: try settings())
        #expect(
            verdict
                == .denied(
                    status: 401,
                    headers: [
                        .init(name: "WWW-Authenticate", value: "Bearer realm=\"uploads\""),
                        .init(name: "Content-Type", value: "text/plain"),
                    ], body: Array("sign in first\n".utf8)))
    }

    @Test func fourOhThreeWithAChunkedBodyIsRelayed() throws {
        let verdict = runner.check(clientRequest("PUT", "/deny403?x=1", []), settings: try settings())
        #expect(
            verdict
                == .denied(
                    status: 403, headers: [.init(name: "Content-Type", value: "application/json")],
                    body: Array(#"{"error":"not your bucket"}"#.utf8)))
        #expect(service.requests.first?.path == "/check/deny403?x=1")
    }

    @Test func aDenialOfAHeadRequestHasNoBody() throws {
        let verdict = runner.check(clientRequest("HEAD", "/deny401", []), settings: try settings())
        guard case .denied(let status, _, let body) = verdict else {
            Issue.record("expected a denial, got \(String(describing: verdict))")
            return
        }
        #expect(status == 401 && body.isEmpty)
    }

    @Test func aServicePastTheTimeoutFails() throws {
        #expect(
            runner.check(clientRequest("POST", "/slow", []), settings: try settings(timeout: 300))
                == .failed(.timeout))
    }

    @Test(arguments: [
        ("/garbage", AuthServiceVerdict.Failure.malformed),
        ("/big", .oversize),
        ("/redirect", .unexpectedStatus),
        ("/allow-repeat", .malformed),
        ("/hangup", .closed),
    ])
    func otherAnswersFail(path: String, failure: AuthServiceVerdict.Failure) throws {
        #expect(runner.check(clientRequest("POST", path, []), settings: try settings()) == .failed(failure))
    }

    @Test func anInterimAnswerIsSkipped() throws {
        let verdict = runner.check(clientRequest("POST", "/interim", []), settings: try settings())
        #expect(verdict == .allowed(identity: [.init(name: "X-User-Id", value: "after-interim")]))
    }

    @Test func aServiceThatIsDownFailsAsUnreachable() throws {
        let parsed = try #require(AuthServiceSettings.parseURL("http://127.0.0.1:\(try closedPort())/check"))
        let down = AuthServiceSettings(target: parsed.target, pathPrefix: parsed.pathPrefix)
        #expect(runner.check(clientRequest("POST", "/allow", []), settings: down) == .failed(.unreachable))
    }

    @Test func anHTTPSServiceWithoutATLSContextFailsWithoutConnecting() throws {
        let parsed = try #require(AuthServiceSettings.parseURL("https://127.0.0.1:\(service.port)"))
        let secure = AuthServiceSettings(target: parsed.target, pathPrefix: parsed.pathPrefix)
        #expect(runner.check(clientRequest("POST", "/allow", []), settings: secure) == .failed(.unreachable))
        #expect(service.requests.isEmpty)
    }

    @Test func cancellingClosesTheConnectionAndNeverCallsBack() throws {
        var calls = 0
        weak var socket: BufferedSocket?
        weak var abandoned: AuthServiceClient?
        do {
            let client = AuthServiceClient(
                base: runner.base, settings: try settings(), request: clientRequest("POST", "/slow", []),
                client: Array("192.0.2.7".utf8), clientTLS: false, tls: nil
            ) { _ in calls += 1 }
            socket = client.socket
            abandoned = client
            #expect(socket != nil)
            client.cancel()
            #expect(!client.isPending)
        }
        // close() dropped the loop's reference to the socket, and nothing keeps the client.
        #expect(socket == nil)
        #expect(abandoned == nil)
        // A client dropped without cancel() is cancelled too.
        do {
            let client = AuthServiceClient(
                base: runner.base, settings: try settings(), request: clientRequest("POST", "/slow", []),
                client: Array("192.0.2.7".utf8), clientTLS: false, tls: nil
            ) { _ in calls += 1 }
            socket = client.socket
        }
        #expect(socket == nil)
        let pause = Timer(base: runner.base) { [base = runner.base] in base.stop() }
        pause.schedule(milliseconds: 100)
        runner.base.run()
        #expect(calls == 0)
    }

    /// A local port nothing listens on (bound, then closed).
    private func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw AuthTestFailure("cannot bind a local port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
