import ProxyCore
import Testing

/// A request check that answers what it was built with.
struct FixedCheck: RequestCheck {
    let answer: CheckAnswer

    func check(_ request: CheckRequest) -> CheckAnswer { answer }
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
