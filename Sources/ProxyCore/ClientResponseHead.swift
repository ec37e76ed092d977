public import HTTP1
import HTTPCore

/// The response head a client gets from an upstream's: hop-by-hop fields removed, the
/// framing re-done for the client, `Connection: close` when the connection ends after it, a
/// `Date` when the upstream sent none (RFC 9110 §6.6.1).
public enum ClientResponseHead {
    static let dateName = Array("Date".utf8)

    /// The head to send.
    ///
    /// - Parameters:
    ///   - framing: the upstream response's body framing.
    ///   - chunked: whether the body goes to the client chunked.
    ///   - keepAlive: whether the client connection stays open after this response.
    ///   - date: the current `Date` value.
    public static func make(
        _ head: ResponseHead, framing: BodyFraming, chunked: Bool, keepAlive: Bool, date: [UInt8]
    ) -> ResponseHead {
        var out = head
        out.headers.removeHopByHop()
        switch framing {
        case .length(let length):
            out.headers.set(name: "Content-Length", value: String(length))
        case .chunked, .untilClose:
            out.headers.removeAll(named: "Content-Length")
            if chunked { out.headers.append(name: "Transfer-Encoding", value: "chunked") }
        case .none:
            break
        }
        if !keepAlive || (framing == .untilClose && !chunked) {
            out.headers.append(name: "Connection", value: "close")
        }
        if !out.headers.contains("Date") {
            out.headers.append(HeaderFields.Field(name: dateName, value: date))
        }
        return out
    }
}
