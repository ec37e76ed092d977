import HTTP1
import HTTPCore
import Testing

@testable import ProxyCore

/// The auth service's URL, its subrequest head and how its answers are judged (no sockets).
@Suite struct AuthServiceSettingsTests {
    @Test(arguments: [
        ("http://auth:8000/check", "http://auth:8000", "/check"),
        ("http://auth:8000/check/", "http://auth:8000", "/check"),
        ("http://auth:8000", "http://auth:8000", ""),
        ("http://auth:8000/", "http://auth:8000", ""),
        ("https://id.example.com/v1/authz", "https://id.example.com", "/v1/authz"),
        ("http://[::1]:9000/a", "http://[::1]:9000", "/a"),
    ])
    func urlsSplitIntoTheServiceAndThePathPrefix(text: String, service: String, prefix: String) throws {
        let parsed = try #require(AuthServiceSettings.parseURL(text))
        #expect(parsed.target.description == service)
        #expect(parsed.pathPrefix == prefix)
    }

    @Test(arguments: [
        "ftp://auth/check", "auth:8000/check", "http:///check", "http://auth:8000/check?x=1",
        "http://auth:8000/check#frag", "http://auth:8000/a b", "http://user@auth/check", "http://auth:0/",
    ])
    func badURLsAreRefused(text: String) {
        #expect(AuthServiceSettings.parseURL(text) == nil)
    }

    @Test func defaultsAndProblems() throws {
        let parsed = try #require(AuthServiceSettings.parseURL("http://auth:8000/check"))
        var settings = AuthServiceSettings(target: parsed.target, pathPrefix: parsed.pathPrefix)
        #expect(settings.timeoutMilliseconds == 5_000)
        #expect(settings.forwardHeaders == ["Authorization", "Cookie"])
        #expect(settings.cacheTTLMilliseconds == 0)
        #expect(settings.onError == .deny)
        #expect(settings.problem == nil)
        settings.forwardHeaders = ["Authorization", "content-length"]
        #expect(
            settings.problem == "content-length cannot be forwarded to the auth service (the proxy sets it)")
        settings.forwardHeaders = ["Bad Name"]
        #expect(settings.problem == "\"Bad Name\" is not a header name")
        settings.forwardHeaders = []
        settings.timeoutMilliseconds = 0
        #expect(settings.problem == "timeout must be positive")
    }

    @Test func theSubrequestCarriesTheMethodTargetAndNamedHeadersOnly() throws {
        let parsed = try #require(AuthServiceSettings.parseURL("http://auth:8000/check"))
        let settings = AuthServiceSettings(
            target: parsed.target, pathPrefix: parsed.pathPrefix,
            forwardHeaders: ["Authorization", "X-Api-Key", "Host"])
        let request = RequestHead(
            method: "PUT", target: "/u/p?x=1",
            headers: HeaderFields([
                ("Host", "up.example"), ("X-Api-Key", "k"), ("Transfer-Encoding", "chunked"),
                ("authorization", "Basic YQ=="),
            ]))
        let head = AuthSubrequest.head(
            for: request, settings: settings, client: Array("::1".utf8), clientTLS: false)
        #expect(head.method == "PUT")
        #expect(head.target == "/check/u/p?x=1")
        #expect(
            String(decoding: head.serialized(), as: UTF8.self)
                == "PUT /check/u/p?x=1 HTTP/1.1\r\nHost: auth:8000\r\nauthorization: Basic YQ==\r\nX-Api-Key: k\r\n"
                + "X-Forwarded-For: ::1\r\nX-Forwarded-Method: PUT\r\nX-Forwarded-Uri: /u/p?x=1\r\n"
                + "X-Forwarded-Host: up.example\r\nX-Forwarded-Proto: http\r\nContent-Length: 0\r\n"
                + "Connection: close\r\n\r\n")
    }

    @Test(arguments: [
        (200, true), (204, true), (299, true), (301, false), (400, false), (404, false), (500, false),
        (503, false),
    ])
    func onlyTwoHundredsAllow(status: Int, allows: Bool) {
        let head = ResponseHead(status: status, reason: "", headers: HeaderFields([("X-User-Id", "u")]))
        let decision = AuthServiceVerdict.judge(head, identityHeaders: ["X-User-Id"])
        let expected: AuthServiceVerdict =
            allows ? .allowed(identity: [.init(name: "X-User-Id", value: "u")]) : .failed(.unexpectedStatus)
        #expect(decision == .done(expected))
    }

    @Test func interimAndDenials() {
        #expect(
            AuthServiceVerdict.judge(ResponseHead(status: 100, reason: ""), identityHeaders: []) == .interim)
        #expect(
            AuthServiceVerdict.judge(ResponseHead(status: 101, reason: ""), identityHeaders: [])
                == .done(.failed(.malformed)))
        #expect(
            AuthServiceVerdict.judge(ResponseHead(status: 401, reason: ""), identityHeaders: []) == .readBody)
        #expect(
            AuthServiceVerdict.judge(ResponseHead(status: 403, reason: ""), identityHeaders: []) == .readBody)
    }

    @Test func identityValuesWithControlsOrBadUTF8Fail() {
        for value: [UInt8] in [[0x61, 0x0D, 0x62], [0x61, 0x0A], [0x00], [0x7F], [0xC3]] {
            var headers = HeaderFields()
            headers.append(name: Array("X-User-Id".utf8), value: value)
            let head = ResponseHead(status: 200, reason: "", headers: headers)
            #expect(
                AuthServiceVerdict.judge(head, identityHeaders: ["X-User-Id"]) == .done(.failed(.malformed)))
        }
        let utf8 = ResponseHead(status: 200, reason: "", headers: HeaderFields([("x-user-id", "Zoë\tA")]))
        #expect(
            AuthServiceVerdict.judge(utf8, identityHeaders: ["X-User-Id"])
                == .done(.allowed(identity: [.init(name: "X-User-Id", value: "Zoë\tA")])))
    }

    @Test func failureReasonsAreAFixedLabelSet() {
        #expect(
            AuthServiceVerdict.Failure.allCases.map(\.rawValue)
                == ["unreachable", "timeout", "unexpected_status", "malformed", "oversize", "closed"])
    }
}
