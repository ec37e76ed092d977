import EventLoop
import HTTP1
import HTTPCore
import ProxyCore

@testable import Proxy

/// Runs auth checks on a loop on the test's thread: each `check` turns the loop until the
/// verdict arrives (the event), or a generous deadline passes (it only ends a test that
/// would hang).
final class CheckRunner {
    let base: EventBase

    init() throws {
        base = try EventBase()
    }

    /// Checks `request` and returns the verdict (`nil`: none within the deadline).
    func check(
        _ request: RequestHead, settings: AuthServiceSettings, client: String = "192.0.2.7",
        clientTLS: Bool = false
    ) -> AuthServiceVerdict? {
        var verdict: AuthServiceVerdict?
        var calls = 0
        let base = base
        let client = AuthServiceClient(
            base: base, settings: settings, request: request, client: Array(client.utf8),
            clientTLS: clientTLS,
            tls: nil
        ) { result in
            calls += 1
            verdict = result
            base.stop()
        }
        turn()
        // A second call would come from an event left behind: give the loop another moment.
        let extra = Timer(base: base) { base.stop() }
        extra.schedule(milliseconds: 50)
        base.run()
        precondition(calls <= 1, "the completion ran \(calls) times")
        withExtendedLifetime(client) {}
        return verdict
    }

    /// Runs the loop until a callback stops it, or 60 s pass.
    func turn() {
        let deadline = Timer(base: base) { [base] in base.stop() }
        deadline.schedule(milliseconds: 60_000)
        base.run()
        deadline.cancel()
    }
}

/// A client request head as the proxy's parser would hand it over.
func clientRequest(_ method: String, _ target: String, _ headers: [(String, String)]) -> RequestHead {
    RequestHead(method: method, target: target, version: .http11, headers: HeaderFields(headers))
}
