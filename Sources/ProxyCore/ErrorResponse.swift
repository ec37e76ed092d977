public import HTTP1
public import HTTPCore

/// The answer FormGate gives when it refuses a request or the upstream fails: a status line,
/// a short plain-text (or JSON, on `Accept: application/json`) body naming the limit or rule,
/// and `Connection: close`.
public enum ErrorResponse {
    /// Writes the whole response for `error` into `sink`.
    ///
    /// - Parameters:
    ///   - request: the request, when its head was read (for `Accept`, `HEAD` and the id).
    ///   - date: the current `Date` value.
    public static func write(
        _ error: ProxyError, request: RequestHead?, requestID: String?, date: [UInt8],
        into sink: inout some ByteSink
    ) {
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
        headers.append(name: "Connection", value: "close")
        headers.append(HeaderFields.Field(name: ClientResponseHead.dateName, value: date))
        if let requestID { headers.append(name: "X-Request-Id", value: requestID) }
        ResponseHead(status: status, reason: ProxyError.reasonPhrase(status), headers: headers)
            .serialize(into: &sink)
        if request?.method != "HEAD" {
            body.withUnsafeBytes { sink.write($0) }
        }
    }

    /// `HTTP/1.1 100 Continue` and its blank line.
    public static func writeContinue(into sink: inout some ByteSink) {
        ResponseHead(status: 100, reason: "Continue").serialize(into: &sink)
    }
}
