import Config
import EventLoop
import HTTP1
import HTTPCore
import ProxyCore

/// One request and its response on a client connection.
final class Exchange {
    enum RequestBody {
        /// Bytes pass as they are (moved between buffers under a Content-Length).
        case passthrough
        /// A multipart body re-encoded under a new boundary.
        case multipart(MultipartPipeline)
    }

    enum Response {
        case awaitingHead(HeadScanner)
        case body(ResponseHead, BodyDecoder, clientChunked: Bool)
        case done
    }

    let head: RequestHead
    let route: Route?
    let target: UpstreamURL
    let requestID: String
    let startedAt: Int64
    var decoder: BodyDecoder
    var body: RequestBody
    /// How the body is framed upstream.
    var upstreamFraming: BodyFraming
    /// The spool for `request_body: buffer`.
    var spool: Spool?
    /// With `order: fields_first`, the spool that holds the file parts.
    var fileSpool: Spool?
    var upstream: UpstreamConnection?
    /// Body bytes read before the upstream connection is ready.
    let staging = OwnedEvBuffer()
    var upstreamHeadSent = false
    /// The whole request (head and body) is in the upstream's output buffer.
    var requestSent = false
    /// The whole request body was read from the client.
    var clientBodyRead = false
    var response: Response = .awaitingHead(HeadScanner(limit: 64 * 1024))
    var responseStarted = false
    var upstreamStatus: Int?
    var bytesIn: Int64 = 0
    var bytesOut: Int64 = 0
    var upstreamStartedAt: Int64 = 0
    var upstreamMilliseconds: Int64?
    var error: String?
    /// How the exchange failed, if it did (for metrics).
    var failure: ProxyError?

    init(
        head: RequestHead, route: Route?, target: UpstreamURL, requestID: String, startedAt: Int64,
        framing: BodyFraming,
        body: RequestBody, upstreamFraming: BodyFraming
    ) {
        self.head = head
        self.route = route
        self.target = target
        self.requestID = requestID
        self.startedAt = startedAt
        self.decoder = BodyDecoder(framing)
        self.body = body
        self.upstreamFraming = upstreamFraming
        self.clientBodyRead = decoder.isComplete
    }

    var isMultipart: Bool {
        if case .multipart = body { return true }
        return false
    }
}
