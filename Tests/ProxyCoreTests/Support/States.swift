import HTTP1
import HTTPCore
import ProxyCore
import Testing

/// A request check that answers what it was built with.
struct FixedCheck: RequestCheck {
    let answer: CheckAnswer

    func check(_ request: CheckRequest) -> CheckAnswer { answer }
}

extension CheckAnswer {
    /// A hold whose consultation no test executes (the fake shell records it; the test reports
    /// the verdict): an auth service at a port nothing listens on, about a placeholder request.
    static func hold(milliseconds: Int64) -> CheckAnswer {
        let parsed = AuthServiceSettings.parseURL("http://127.0.0.1:9")!
        let service = AuthServiceCheck(settings: AuthServiceSettings(target: parsed.target, pathPrefix: ""))
        let request = CheckRequest(
            head: RequestHead(method: "GET", target: "/", version: .http11, headers: HeaderFields()),
            route: "",
            client: [], now: 0)
        return .hold(.authService(service, request), milliseconds: milliseconds)
    }
}

/// The states an exchange passes through, each reached from a fresh connection.
enum ExchangeState: String, CaseIterable, CustomTestStringConvertible {
    /// Part of a head has arrived (no exchange yet).
    case partialHead
    /// A request check holds the request.
    case held
    /// Body bytes are arriving; the upstream is still connecting.
    case connecting
    /// Body bytes are arriving and going upstream.
    case sendingBody
    /// The whole request went upstream; no response yet.
    case awaitingResponse
    /// The response head went to the client; its body is on the way.
    case relayingResponse

    var testDescription: String { rawValue }

    /// Whether an exchange exists in this state.
    var hasExchange: Bool { self != .partialHead }

    /// Whether an upstream connection exists in this state.
    var hasUpstream: Bool { self != .partialHead && self != .held }

    static let routes: RouteTable = {
        var held = Route(pathPrefix: "/held")
        held.checks = [FixedCheck(answer: .hold(milliseconds: 4_000))]
        return RouteTable([held])
    }()

    /// A harness in this state.
    func reach() -> Harness {
        let harness = Harness(routes: Self.routes)
        switch self {
        case .partialHead:
            harness.clientSends("POST /a HTTP/1.1\r\nHost:")
        case .held:
            harness.clientSends("POST /held HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
        case .connecting:
            harness.clientSends(Wire.postHead(length: 10) + "abc")
        case .sendingBody:
            harness.clientSends(Wire.postHead(length: 10) + "abc")
            harness.upstreamConnects()
            harness.upstreamDrains()
        case .awaitingResponse:
            harness.clientSends(Wire.post("0123456789"))
            harness.upstreamConnects()
            harness.upstreamDrains()
        case .relayingResponse:
            harness.clientSends(Wire.post("0123456789"))
            harness.upstreamConnects()
            harness.upstreamDrains()
            harness.upstreamSends("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nfive.")
            harness.clientDrains()
        }
        return harness
    }
}
