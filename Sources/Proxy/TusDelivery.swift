import EventLoop
import HTTP1
import HTTPCore
import ProxyCore
import Resumable
import Synchronization
import UploadRules

#if canImport(Glibc)
    import Glibc
#endif

/// Delivers a finished upload as one ordinary multipart POST through the route's rules: the
/// worker serves one end of a socket pair as a client connection on the route's delivery
/// route (the tus route's rules, upstream and headers, reachable from nowhere else), and a
/// thread of the delivery's own writes the request into the other end (the head, the fields,
/// the file read from the store, the closing delimiter) and reads the answer. Everything a
/// POST gets (rules, digests, spooling, the upstream pool, timeouts, its access-log line with
/// `parts`) the delivery gets, and no event loop waits on the store's disk.
enum TusDelivery {
    /// The header that carries the delivery's ticket (its identity) to the delivery route.
    static let ticketHeader = "X-Formgate-Delivery"
    /// The largest upstream answer stored (and replayed).
    static let maxAnswerBytes = 1 << 20
    /// How long the delivery thread waits on its socket before it gives up (a backstop: the
    /// connection's own timeouts answer first).
    static let socketTimeoutSeconds = 600

    /// The route a delivery takes: the tus route's rules, upstream and header rules, at the
    /// delivery path, without its checks or limiter (the tus requests passed them) and with
    /// the ticket check that restores the uploader's identity.
    static func route(_ route: Route, _ settings: TusSettings, tickets: DeliveryTickets) -> Route {
        var delivery = route
        delivery.local = nil
        delivery.tus = nil
        delivery.methods = []
        delivery.pathPrefix = settings.deliverPath
        delivery.checks = [DeliveryCheck(tickets: tickets)]
        delivery.rateLimiter = nil
        // The legacy server gets an exact Content-Length, as from a browser's form.
        delivery.rules.requiresContentLength = true
        var forwarding = route.authForwarding ?? AuthForwarding()
        forwarding.strip.append(ticketHeader)
        delivery.authForwarding = forwarding
        return delivery
    }

    /// The request head the delivery thread writes.
    static func head(
        _ form: DeliveryForm, settings: TusSettings, request: LocalRequest, ticket: String?
    ) -> [UInt8] {
        var head = "POST \(settings.deliverPath) HTTP/1.1\r\n"
        let host = request.head.headers["Host"].flatMap { TusHandler.isHost($0) ? $0 : nil } ?? "localhost"
        head += "Host: \(host)\r\n"
        head += "Content-Type: \(form.contentType)\r\n"
        head += "Content-Length: \(form.contentLength)\r\n"
        head += "X-Request-Id: \(request.requestID)\r\n"
        if let ticket { head += "\(ticketHeader): \(ticket)\r\n" }
        head += "Connection: close\r\n\r\n"
        return Array(head.utf8) + form.head
    }
}

/// The identities of deliveries under way, by ticket: a delivery's request names its ticket,
/// and the delivery route's check takes the identity back (once).
final class DeliveryTickets: Sendable {
    private let identities = Mutex<[String: Identity]>([:])

    func issue(_ identity: Identity) -> String {
        var random = SecureRandom()
        let ticket = Hex.random(words: 2, using: &random)
        identities.withLock { $0[ticket] = identity }
        return ticket
    }

    func take(_ ticket: String) -> Identity? {
        identities.withLock { $0.removeValue(forKey: ticket) }
    }
}

/// The delivery route's check: the uploader's identity, from the ticket the request carries.
struct DeliveryCheck: RequestCheck {
    let tickets: DeliveryTickets

    func check(_ request: CheckRequest) -> CheckAnswer {
        guard let ticket = request.head.headers[TusDelivery.ticketHeader], let identity = tickets.take(ticket)
        else {
            return .pass
        }
        return .identified(identity)
    }
}

/// The delivery's client end: a blocking thread that writes the request and reads the answer.
struct TusDeliveryClient: Sendable {
    let fd: Int32
    let head: [UInt8]
    let form: DeliveryForm
    let store: any UploadStore
    let id: UploadID

    /// Runs the delivery on a thread of its own; `done` hears the outcome there.
    func start(_ done: @escaping @Sendable (DeliveryOutcome) -> Void) {
        do throws(EventLoopError) {
            try EventLoopThread.start(name: "fg-tus-deliver") { done(run()) }
        } catch {
            close(fd)
            done(.failed(status: 503, reason: "no thread for the delivery"))
        }
    }

    private func run() -> DeliveryOutcome {
        defer { close(fd) }
        var timeout = timeval(tv_sec: TusDelivery.socketTimeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // A store shared by replicas: this one delivers, under the upload's lock, unless another
        // does now or did (its answer stored).
        do throws(StoreError) {
            try store.beginDelivery(id)
            if let stored = try store.answer(id) { return .answered(stored) }
        } catch {
            return error == .locked
                ? .failed(status: 423, reason: "another replica delivers this upload now")
                : .failed(status: 500, reason: "the upload's delivery could not be claimed in the store")
        }
        // A write that fails means the proxy answered early (a rule refused the body): its
        // answer is read all the same.
        if send(head) {
            var offset: Int64 = 0
            var sending = true
            let file: Int32?
            do throws(StoreError) {
                file = try store.readDescriptor(id)
            } catch {
                return .failed(status: 500, reason: "the upload could not be read from the store")
            }
            if let file {
                defer { close(file) }
                // The file's bytes go from the page cache to the socket (`sendfile`).
                var position = off_t(0)
                while sending, Int64(position) < form.fileLength {
                    let count = Int(min(Int64(1 << 20), form.fileLength - Int64(position)))
                    let sent = sendfile(fd, file, &position, count)
                    if sent < 0, errno == EINTR { continue }
                    if sent == 0 {
                        return .failed(status: 500, reason: "the upload's bytes end before its length")
                    }
                    sending = sent > 0
                }
                offset = form.fileLength
            }
            while sending, offset < form.fileLength {
                let count = Int(min(Int64(1 << 20), form.fileLength - offset))
                let chunk: [UInt8]
                do throws(StoreError) {
                    chunk = try store.read(id, at: offset, count: count)
                } catch {
                    return .failed(status: 500, reason: "the upload could not be read from the store")
                }
                guard chunk.count == count else {
                    return .failed(status: 500, reason: "the upload's bytes end before its length")
                }
                sending = send(chunk)
                offset += Int64(count)
            }
            if sending { _ = send(form.tail) }
        }
        return readAnswer()
    }

    /// Writes all of `bytes`; false when the connection no longer takes them.
    private func send(_ bytes: [UInt8]) -> Bool {
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + written, $0.count - written, Int32(MSG_NOSIGNAL))
            }
            if result < 0, errno == EINTR { continue }
            guard result > 0 else { return false }
            written += result
        }
        return true
    }

    /// Reads the proxy's answer: its status, type and body (up to `maxAnswerBytes`).
    private func readAnswer() -> DeliveryOutcome {
        let input = ByteArraySource()
        var reader = ResponseHeadReader(limit: 64 * 1024)
        var parsed: (head: ResponseHead, framing: BodyFraming)?
        var decoder: BodyDecoder?
        var body: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var ended = false
        while true {
            do throws(HTTP1Error) {
                if parsed == nil, let found = try reader.read(from: input, requestMethod: "POST") {
                    parsed = found
                    decoder = BodyDecoder(found.framing)
                }
                if decoder != nil {
                    let complete = try input.decodeBody(&decoder!) { body.append(contentsOf: $0) }
                    if complete || (ended && decoder!.endsAtClose) { break }
                }
            } catch {
                return .failed(status: 502, reason: "the delivery's answer could not be read")
            }
            guard body.count <= TusDelivery.maxAnswerBytes else {
                return .failed(status: 502, reason: "the upstream's answer is over 1 MiB")
            }
            if ended { return .failed(status: 502, reason: "the delivery's answer ended early") }
            let got = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got < 0, errno == EINTR { continue }
            if got < 0 {
                return .failed(status: 504, reason: "the delivery's answer did not come")
            }
            if got == 0 {
                ended = true
            } else {
                input.append(chunk[..<got])
            }
        }
        guard let head = parsed?.head else { return .failed(status: 502, reason: "no answer") }
        let type = head.headers["Content-Type"]
        return .answered(StoredAnswer(status: head.status, contentType: type, body: body))
    }
}

/// A `ByteSource` over bytes read into an array (the delivery thread's answer).
final class ByteArraySource: ByteSource {
    private var bytes: [UInt8] = []
    private var start = 0

    var count: Int { bytes.count - start }

    func append(_ more: ArraySlice<UInt8>) {
        if start > 0, start == bytes.count {
            bytes.removeAll(keepingCapacity: true)
            start = 0
        }
        bytes.append(contentsOf: more)
    }

    func forEachChunk(limit: Int, _ body: (UnsafeRawBufferPointer) -> Bool) {
        guard count > 0 else { return }
        bytes.withUnsafeBytes { raw in
            _ = body(UnsafeRawBufferPointer(rebasing: raw[start..<(start + min(limit, count))]))
        }
    }

    func drain(_ count: Int) { start += count }

    func remove(_ count: Int) -> [UInt8] {
        defer { start += count }
        return Array(bytes[start..<(start + count)])
    }
}
