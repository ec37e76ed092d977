public import HTTP1
public import HTTPCore

/// The answer FormGate gives when it refuses a request or the upstream fails: a status, a
/// short plain-text (or JSON, on `Accept: application/json`) body naming the limit or rule,
/// and its fields. `make` builds it for any transport; `write` serializes it for HTTP/1.1 with
/// `Connection: close`.
public enum ErrorResponse {
    /// An error answer, before any transport's framing.
    public struct Answer: Sendable, Equatable {
        /// The status code.
        public var status: Int
        /// The fields: a refusal's own (`WWW-Authenticate`, `Retry-After`), `Content-Type`,
        /// `Content-Length`, `Date`, `X-Request-Id`.
        public var headers: HeaderFields
        /// The body to send: empty for a `HEAD` request (whose `Content-Length` still counts it).
        public var body: [UInt8]
    }

    /// The answer for `error`.
    ///
    /// - Parameters:
    ///   - request: the request, when its head was read (for `Accept`, `HEAD` and the id).
    ///   - date: the current `Date` value.
    public static func make(_ error: ProxyError, request: RequestHead?, requestID: String?, date: [UInt8])
        -> Answer
    {
        make(error, request: request, requestID: requestID, date: date, closing: false)
    }

    /// The answer, with `Connection: close` after `Content-Length` when `closing`.
    static func make(
        _ error: ProxyError, request: RequestHead?, requestID: String?, date: [UInt8], closing: Bool
    ) -> Answer {
        let status = error.status
        let body: [UInt8]
        let contentType: String
        if let relayed = error.refusal?.body {
            // An auth service's 401 or 403 body reaches the client as the service wrote it.
            body = relayed.bytes
            contentType = relayed.contentType ?? "text/plain; charset=utf-8"
        } else if request?.headers["Accept"]?.contains("application/json") ?? false {
            body = Array("{\"status\":\(status),\"error\":\(jsonString(error.detail))}\n".utf8)
            contentType = "application/json"
        } else {
            body = Array("\(status) \(ProxyError.reasonPhrase(status)): \(error.detail)\n".utf8)
            contentType = "text/plain; charset=utf-8"
        }
        var headers = HeaderFields()
        headers.reserveCapacity(5)
        for field in error.refusal?.fields ?? [] { headers.append(name: field.name, value: field.value) }
        headers.append(name: "Content-Type", value: contentType)
        headers.append(name: "Content-Length", value: String(body.count))
        if closing { headers.append(name: "Connection", value: "close") }
        headers.append(HeaderFields.Field(name: ClientResponseHead.dateName, value: date))
        if let requestID { headers.append(name: "X-Request-Id", value: requestID) }
        return Answer(status: status, headers: headers, body: request?.method == "HEAD" ? [] : body)
    }

    /// Writes the whole HTTP/1.1 response for `error` into `sink`, with `Connection: close`.
    ///
    /// - Parameters:
    ///   - request: the request, when its head was read (for `Accept`, `HEAD` and the id).
    ///   - date: the current `Date` value.
    public static func write(
        _ error: ProxyError, request: RequestHead?, requestID: String?, date: [UInt8],
        into sink: inout some ByteSink
    ) {
        let answer = make(error, request: request, requestID: requestID, date: date, closing: true)
        ResponseHead(
            status: answer.status, reason: ProxyError.reasonPhrase(answer.status), headers: answer.headers
        )
        .serialize(into: &sink)
        answer.body.withUnsafeBytes { sink.write($0) }
    }

    /// `HTTP/1.1 100 Continue` and its blank line.
    public static func writeContinue(into sink: inout some ByteSink) {
        ResponseHead(status: 100, reason: "Continue").serialize(into: &sink)
    }
}
