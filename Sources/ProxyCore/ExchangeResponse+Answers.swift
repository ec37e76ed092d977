import HTTP1
import HTTPCore

/// Answers FormGate gives itself, in place of an upstream's: an error, or a local route's.
extension ExchangeResponse {
    /// Queues the error answer for `error` to `request` (HTTP/2: HEADERS, then the body as
    /// DATA and END_STREAM; HTTP/1.1: head and body, the connection closing after). Returns the
    /// body bytes queued for the client (HTTP/1.1: head and body).
    static func answerError(
        _ error: ProxyError, request: RequestHead, requestID: String, http2: Bool, date: [UInt8],
        actions: inout ActionBuffer
    ) -> Int64 {
        guard http2 else {
            return Int64(
                actions.sendClient {
                    ErrorResponse.write(error, request: request, requestID: requestID, date: date, into: &$0)
                })
        }
        let answer = ErrorResponse.make(error, request: request, requestID: requestID, date: date)
        return answerStream(status: answer.status, headers: answer.headers, body: answer.body, &actions)
    }

    /// Queues a local route's `answer` to `request`, with its `Content-Length`, `Date` and
    /// `X-Request-Id` (HTTP/1.1: `Connection: close` unless `keepAlive`; no body to a HEAD).
    /// Returns the bytes queued for the client (HTTP/2: the body's).
    static func answerLocally(
        _ answer: LocalAnswer, request: RequestHead, requestID: String, http2: Bool, keepAlive: Bool,
        date: [UInt8], actions: inout ActionBuffer
    ) -> Int64 {
        var headers = answer.headers
        // RFC 9110 §8.6: no Content-Length on a 204 (nor a body).
        let noContent = answer.status == 204
        if !noContent { headers.append(name: "Content-Length", value: String(answer.body.count)) }
        headers.append(HeaderFields.Field(name: ClientResponseHead.dateName, value: date))
        headers.append(name: "X-Request-Id", value: requestID)
        let body = request.method == "HEAD" || noContent ? [] : answer.body
        if http2 { return answerStream(status: answer.status, headers: headers, body: body, &actions) }
        if !keepAlive { headers.append(name: "Connection", value: "close") }
        let head = ResponseHead(
            status: answer.status, reason: ProxyError.reasonPhrase(answer.status), headers: headers)
        return Int64(
            actions.sendClient { out in
                head.serialize(into: &out)
                body.withUnsafeBytes { out.write($0) }
            })
    }

    /// HTTP/2: HEADERS (ending the stream when `body` is empty), else DATA and END_STREAM.
    /// Returns the body bytes queued.
    private static func answerStream(
        status: Int, headers: HeaderFields, body: [UInt8], _ actions: inout ActionBuffer
    ) -> Int64 {
        actions.append(
            .respondClient(StreamResponseHead(status: status, headers: headers, endsStream: body.isEmpty)))
        guard !body.isEmpty else { return 0 }
        let queued = Int64(actions.sendClient { out in body.withUnsafeBytes { out.write($0) } })
        actions.append(.endClientStream)
        return queued
    }

    /// Answers `Expect: 100-continue`: HTTP/2, an interim HEADERS frame (RFC 9113 §8.1); HTTP/1.1,
    /// `100 Continue`; never to HTTP/1.0 (RFC 9110 §15.2: no 1xx to a 1.0 client; §10.1.1:
    /// ignore it).
    static func answerContinue(request: RequestHead, http2: Bool, _ actions: inout ActionBuffer) {
        if http2 {
            actions.append(.respondClient(.continue))
        } else if request.version == .http11 {
            actions.sendClient { ErrorResponse.writeContinue(into: &$0) }
        }
    }
}
