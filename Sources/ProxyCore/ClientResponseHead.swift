public import HTTP1
import HTTPCore

/// The response head a client gets from an upstream's: hop-by-hop fields removed, the
/// framing re-done for the client, `Connection: close` when the connection ends after it, a
/// `Date` when the upstream sent none (RFC 9110 §6.6.1). `stream` makes the HTTP/2 version.
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
        _ head: consuming ResponseHead, framing: BodyFraming, chunked: Bool, keepAlive: Bool, date: [UInt8]
    ) -> ResponseHead {
        var out = head
        out.headers.removeHopByHop()
        switch framing {
        case .length(let length):
            out.headers.set(name: "Content-Length", value: String(length))
        case .chunked, .untilClose, .untilEndOfStream:
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

    /// The head for an HTTP/2 stream: the upstream's status and fields, less the
    /// connection-specific ones (RFC 9113 §8.2.2: `Connection`, `Keep-Alive`,
    /// `Proxy-Connection`, `Transfer-Encoding`, `Upgrade`, `TE`, and `Trailer`, as trailers are
    /// dropped) and those `Connection` names. `Content-Length` stays only under a Content-Length
    /// framing (the DATA will match it) or without a body framing (`HEAD`, 204, 304: as received).
    ///
    /// - Parameters:
    ///   - framing: the upstream response's body framing (`.none` or an empty length: the
    ///     head ends the stream).
    ///   - date: the current `Date` value, added when the upstream sent none.
    public static func stream(_ head: ResponseHead, framing: BodyFraming, date: [UInt8]) -> StreamResponseHead
    {
        var headers = head.headers
        headers.removeHopByHop()
        switch framing {
        case .length(let length):
            // The upstream's one Content-Length, when it already says the length, stays as it
            // is: setting it again grew the head's buffer (an allocation and a copy per
            // response). HPACK lowercases the name either way.
            let digits = String(length)
            if headers.count(of: "Content-Length") != 1
                || headers.firstValue("Content-Length")?.elementsEqual(digits.utf8) != true
            {
                headers.set(name: "Content-Length", value: digits)
            }
        case .chunked, .untilClose, .untilEndOfStream:
            headers.removeAll(named: "Content-Length")
        case .none:
            break
        }
        if !headers.contains("Date") {
            headers.append(HeaderFields.Field(name: dateName, value: date))
        }
        let bodiless = framing == .none || framing == .length(0)
        return StreamResponseHead(status: head.status, headers: headers, endsStream: bodiless)
    }
}
