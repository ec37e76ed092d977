import HTTPCore
import ProxyCore
import Testing
import UploadRules

/// What each auth-service answer becomes for the route's check sequence.
@Suite struct AuthServiceCheckVerdictTests {
    static func settings(onError: AuthServiceSettings.OnError = .deny) -> AuthServiceSettings {
        AuthServiceSettings(
            target: UpstreamURL(scheme: .http, host: "auth", port: 8000), pathPrefix: "/check",
            identityHeaders: ["X-User-Id", "X-Tenant"], onError: onError)
    }

    @Test func anAllowingAnswerBecomesTheIdentity() {
        let verdict = AuthServiceVerdict.allowed(identity: [
            .init(name: "X-User-Id", value: "u42"), .init(name: "X-Tenant", value: "t1"),
        ])
        #expect(
            verdict.checkVerdict(settings: Self.settings())
                == .release(
                    Identity(
                        subject: "u42", method: .request, attributes: ["x-user-id": "u42", "x-tenant": "t1"]),
                    tally: .auth(.allowed, reason: "request")))
    }

    @Test func withoutTheSubjectHeaderThereIsNoIdentity() {
        let verdict = AuthServiceVerdict.allowed(identity: [.init(name: "X-Tenant", value: "t1")])
        #expect(
            verdict.checkVerdict(settings: Self.settings())
                == .release(nil, tally: .auth(.allowed, reason: "request")))
    }

    @Test func aDenialIsRelayed() {
        let verdict = AuthServiceVerdict.denied(
            status: 401,
            headers: [
                .init(name: "WWW-Authenticate", value: "Bearer"),
                .init(name: "Content-Type", value: "text/plain"),
            ],
            body: Array("no".utf8))
        #expect(
            verdict.checkVerdict(settings: Self.settings())
                == .refuse(
                    Refusal(
                        status: 401, reason: "refused by the auth service",
                        fields: [.init("WWW-Authenticate", "Bearer")],
                        body: .init(contentType: "text/plain", bytes: Array("no".utf8)),
                        tally: .auth(.denied, reason: "unauthenticated"))))
    }

    @Test func aFailureIs503UnlessOnErrorAllows() {
        let verdict = AuthServiceVerdict.failed(.timeout)
        #expect(
            verdict.checkVerdict(settings: Self.settings())
                == .refuse(
                    Refusal(
                        status: 503, reason: "the auth service is unavailable",
                        tally: .auth(.error, reason: "timeout"))))
        #expect(
            verdict.checkVerdict(settings: Self.settings(onError: .allow))
                == .release(nil, tally: .auth(.error, reason: "timeout")))
    }
}
