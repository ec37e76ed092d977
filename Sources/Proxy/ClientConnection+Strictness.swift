import HTTP1
import HTTPCore

extension ClientConnection {
    static let dateName = Array("Date".utf8)

    /// The `Date` value for a response sent now (RFC 9110 §6.6.1: a recipient with a clock
    /// adds one when the upstream did not): the worker's per-second string.
    func responseDate() -> [UInt8] {
        worker.date.value(at: worker.base.nowMilliseconds / 1000)
    }

    /// Removes request fields whose name contains `_` unless `underscores_in_headers` allows
    /// them, as nginx does: CGI-style servers (PHP, Python WSGI) turn `-` and `_` alike into
    /// `_`, so `Content_Length` or `X_Forwarded_For` would stand in for the field FormGate
    /// checked or set. Each drop counts as the rule action `drop_underscore_header`.
    func dropUnderscoreFields(_ head: inout RequestHead) {
        guard !config.underscoresInHeaders else { return }
        let dropped = head.headers.reduce(0) { $0 + ($1.name.contains(UInt8(ascii: "_")) ? 1 : 0) }
        guard dropped > 0 else { return }
        head.headers.removeAll { $0.name.contains(UInt8(ascii: "_")) }
        worker.metrics.update { $0.ruleActions["drop_underscore_header", default: 0] += dropped }
    }
}
