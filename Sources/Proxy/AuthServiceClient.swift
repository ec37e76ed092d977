import EventLoop
import HTTP1
import HTTPIO
import ProxyCore

/// One check with an auth service (`auth: { request: ... }`), on a worker's event loop:
/// connects, writes the subrequest (`AuthSubrequest`: the client's method and target under the
/// URL's path, the forwarded headers, never the body), reads the answer's head and, for a
/// denial, its body (at most `AuthServiceVerdict.maxBodyBytes`, by Content-Length, chunked or
/// until close; the head with the `ResponseHeadReader` the upstream leg reads with), and
/// calls back exactly once with the verdict. Nothing blocks: the connect, the name lookup and
/// every read are the loop's events, and one `Timer` bounds the whole check (`timeout`).
///
/// Each check has its own connection, closed at the verdict (`Connection: close`): simple and
/// never confused by a service that answers early or keeps a body half read; a keep-alive pool
/// is a later optimisation.
///
/// The owner keeps the client alive while it waits and calls `cancel()` when the client's
/// request goes away; dropping the last reference cancels too (the socket is closed, the timer
/// removed). The completion is never called from inside `start` or `cancel`.
final class AuthServiceClient: BufferedSocketDelegate {
    typealias Completion = (AuthServiceVerdict) -> Void

    /// Where the answer stands.
    private enum Phase {
        case head(ResponseHeadReader)
        case body(ResponseHead, BodyDecoder)
        case finished
    }

    private let identityHeaders: [String]
    private let method: String
    /// The connection to the service (`nil` once the check is over).
    private(set) var socket: BufferedSocket?
    private var timer: Timer?
    private var completion: Completion?
    private var phase = Phase.head(AuthServiceClient.newReader())
    private var body: [UInt8] = []
    private var connected = false
    /// A failure found before the loop ran (no socket), reported by the timer at once.
    private var pendingFailure: AuthServiceVerdict.Failure?

    /// Starts checking `request` with the service of `settings`.
    ///
    /// - Parameters:
    ///   - client: the client's numeric address (`X-Forwarded-For`).
    ///   - clientTLS: whether the client came over TLS (`X-Forwarded-Proto`).
    ///   - tls: the client TLS context for an `https` service (`nil` fails as `.unreachable`).
    ///   - completion: called once, on the loop's thread, unless the check is cancelled.
    init(
        base: EventBase, settings: AuthServiceSettings, request: RequestHead, client: [UInt8],
        clientTLS: Bool,
        tls: TLSClientContext?, completion: @escaping Completion
    ) {
        identityHeaders = settings.identityHeaders
        method = request.method
        self.completion = completion
        let timer = Timer(base: base) { [weak self] in
            guard let self else { return }
            withExtendedLifetime(self) { self.finish(.failed(self.pendingFailure ?? .timeout)) }
        }
        self.timer = timer
        let head = AuthSubrequest.head(for: request, settings: settings, client: client, clientTLS: clientTLS)
        do throws(EventLoopError) {
            if settings.target.scheme == .https, tls == nil { throw EventLoopError("no TLS context") }
            let socket = try BufferedSocket.connect(
                base: base, host: settings.target.host, port: settings.target.port,
                tls: settings.target.scheme == .https ? tls : nil, delegate: WeakSocketDelegate(self))
            // The answer is read in pieces of at most 64 KiB: a service that sends more than
            // the limits allow is stopped after that much.
            socket.setWatermarks(readHigh: 64 * 1024, writeLow: 0)
            socket.output.add(head.serialized())
            self.socket = socket
            timer.schedule(milliseconds: settings.timeoutMilliseconds)
        } catch {
            pendingFailure = .unreachable
            timer.schedule(milliseconds: 0)
        }
    }

    deinit {
        socket?.close()
        timer?.cancel()
    }

    /// Abandons the check: the connection is closed and the completion is never called.
    func cancel() {
        completion = nil
        tearDown()
    }

    /// Whether the check is still waiting for its verdict.
    var isPending: Bool { completion != nil }

    func socketReadable(_ socket: BufferedSocket) {
        readAnswer(from: socket.input)
    }

    func socketWritable(_ socket: BufferedSocket) {}

    func socket(_ socket: BufferedSocket, events: SocketEvents) {
        if events.contains(.connected) {
            connected = true
            socket.enable()
            return
        }
        switch phase {
        case .head:
            // Before the connect (and TLS handshake) completes, the service is not there.
            finish(.failed(connected ? .closed : .unreachable))
        case .body(let head, let decoder):
            let closedAtEnd = events.contains(.endOfFile) && decoder.endsAtClose
            finish(closedAtEnd ? AuthServiceVerdict.denial(head, body: body) : .failed(.closed))
        case .finished:
            break
        }
    }

    /// Takes what arrived: heads (1xx ones skipped), then a denial's body.
    private func readAnswer(from input: EvBuffer) {
        do throws(HTTP1Error) {
            while true {
                switch phase {
                case .head(var reader):
                    guard let (head, framing) = try reader.read(from: input, requestMethod: method) else {
                        phase = .head(reader)
                        return
                    }
                    switch AuthServiceVerdict.judge(head, identityHeaders: identityHeaders) {
                    case .interim:
                        // The reader skips interim heads; a 1xx never comes here.
                        phase = .head(Self.newReader())
                    case .done(let verdict):
                        return finish(verdict)
                    case .readBody:
                        if case .length(let length) = framing, length > AuthServiceVerdict.maxBodyBytes {
                            return finish(.failed(.oversize))
                        }
                        phase = .body(head, BodyDecoder(framing))
                    }
                case .body(let head, var decoder):
                    var oversize = false
                    let complete = try input.decodeBody(&decoder) { chunk in
                        oversize = oversize || body.count + chunk.count > AuthServiceVerdict.maxBodyBytes
                        if !oversize { body.append(contentsOf: chunk) }
                    }
                    if oversize { return finish(.failed(.oversize)) }
                    guard complete else {
                        phase = .body(head, decoder)
                        return
                    }
                    return finish(AuthServiceVerdict.denial(head, body: body))
                case .finished:
                    return
                }
            }
        } catch {
            finish(.failed(error.reason == .headTooLarge ? .oversize : .malformed))
        }
    }

    /// Reports the verdict once and releases the connection; the completion runs last (it
    /// may drop the last reference to this client).
    private func finish(_ verdict: AuthServiceVerdict) {
        guard let completion else { return }
        self.completion = nil
        tearDown()
        completion(verdict)
    }

    private func tearDown() {
        phase = .finished
        socket?.close()
        socket = nil
        timer?.cancel()
        body = []
    }

    private static func newReader() -> ResponseHeadReader {
        ResponseHeadReader(limit: AuthServiceVerdict.maxHeadBytes)
    }
}

/// The auth socket's delegate: it forwards to the client while the client lives. A socket
/// holds its delegate until closed, and the client, not the socket, decides how long the
/// check lives: dropping the client closes the socket (`deinit`).
private final class WeakSocketDelegate: BufferedSocketDelegate {
    weak var client: AuthServiceClient?

    init(_ client: AuthServiceClient) {
        self.client = client
    }

    func socketReadable(_ socket: BufferedSocket) { client?.socketReadable(socket) }
    func socketWritable(_ socket: BufferedSocket) { client?.socketWritable(socket) }
    func socket(_ socket: BufferedSocket, events: SocketEvents) { client?.socket(socket, events: events) }
}
