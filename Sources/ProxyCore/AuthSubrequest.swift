public import HTTP1
import HTTPCore

/// The request sent to an auth service for a client's request.
///
/// Its method is the client's; its target is the settings' path prefix followed by the
/// client's target (path and query, as normalised by the head parser): with
/// `url: http://auth:8000/check`, `POST /upload/photo?album=3` is checked as
/// `POST /check/upload/photo?album=3`; with `http://auth:8000` (no path), as
/// `POST /upload/photo?album=3` (Envoy's `path_prefix` rule).
///
/// Its headers, in order: `Host` (the service's authority), every client field named in
/// `forward_headers` (all occurrences, as sent), `X-Forwarded-For` (the client's address only:
/// the client's own `X-Forwarded-For` is not vouched for), `X-Forwarded-Method`,
/// `X-Forwarded-Uri` (the client's target), `X-Forwarded-Host` (the client's `Host`, when
/// sent), `X-Forwarded-Proto`, `Content-Length: 0` and `Connection: close`. The body is never
/// sent.
public enum AuthSubrequest {
    /// The fields the subrequest writes itself: never copied from the client, whatever
    /// `forward_headers` says.
    public static let reservedNames = [
        "Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive", "TE", "Trailer",
        "Upgrade", "Expect", "X-Forwarded-For", "X-Forwarded-Method", "X-Forwarded-Uri",
        "X-Forwarded-Host", "X-Forwarded-Proto",
    ]

    /// Whether `name` is one of `reservedNames` (ASCII case-insensitive).
    public static func isReserved(_ name: String) -> Bool {
        reservedNames.contains { $0.lowercased() == name.lowercased() }
    }

    /// The subrequest's head for `request`.
    ///
    /// - Parameters:
    ///   - client: the client's numeric address.
    ///   - clientTLS: whether the client reached the proxy over TLS (`X-Forwarded-Proto`).
    public static func head(
        for request: RequestHead, settings: AuthServiceSettings, client: [UInt8], clientTLS: Bool
    ) -> RequestHead {
        var headers = HeaderFields()
        headers.append(name: Array("Host".utf8), value: settings.target.authorityBytes)
        for name in settings.forwardHeaders where !isReserved(name) {
            for field in request.headers where field.nameString.lowercased() == name.lowercased() {
                headers.append(field)
            }
        }
        headers.append(name: Array("X-Forwarded-For".utf8), value: client)
        headers.append(name: "X-Forwarded-Method", value: request.method)
        headers.append(name: "X-Forwarded-Uri", value: request.target)
        if let host = request.headers.firstValue("Host") {
            headers.append(name: Array("X-Forwarded-Host".utf8), value: host)
        }
        headers.append(name: "X-Forwarded-Proto", value: clientTLS ? "https" : "http")
        headers.append(name: "Content-Length", value: "0")
        headers.append(name: "Connection", value: "close")
        return RequestHead(
            method: request.method, target: settings.pathPrefix + request.target, version: .http11,
            headers: headers)
    }
}
