import EventLoop
import HTTP1
import HTTPCore
import HTTPIO
import MultipartParsing

/// One client of the demo upstream: reads requests in order and answers each with a JSON
/// receipt.
final class DemoConnection: BufferedSocketDelegate {
    enum State {
        case head(HeadScanner)
        case body(RequestHead, BodyDecoder, Receipt)
        case closing
    }

    let socket: BufferedSocket
    unowned let server: DemoUpstream
    var state: State = .head(HeadScanner(limit: 64 * 1024))
    /// Requests served on this connection (shows keep-alive reuse in receipts).
    var requests = 0

    init(socket: BufferedSocket, server: DemoUpstream) {
        self.socket = socket
        self.server = server
        socket.delegate = self
        // As in the proxy: one wake-up reads at most 256 KiB, and reading pauses while that
        // much waits unconsumed.
        socket.setWatermarks(readHigh: 256 * 1024, writeLow: 0)
        socket.setTimeouts(readMilliseconds: 120_000, writeMilliseconds: 120_000)
    }

    func socketReadable(_ socket: BufferedSocket) {
        process()
    }

    func socketWritable(_ socket: BufferedSocket) {
        if case .closing = state, socket.output.count == 0 { close() }
    }

    func socket(_ socket: BufferedSocket, events: SocketEvents) {
        if events.contains(.endOfFile), case .body(let head, var decoder, let receipt) = state,
            decoder.endsAtClose
        {
            _ = head
            _ = try? socket.input.decodeBody(&decoder) { receipt.consume($0) }
        }
        close()
    }

    private func close() {
        socket.close()
        server.closed(self)
    }

    private func process() {
        let input = socket.input
        while true {
            switch state {
            case .closing:
                input.drain(input.count)
                return
            case .head(var scanner):
                let headBytes: [UInt8]
                do throws(HTTP1Error) {
                    guard let bytes = try input.takeHead(&scanner) else {
                        state = .head(scanner)
                        return
                    }
                    headBytes = bytes
                } catch {
                    return fail(400, "\(error)")
                }
                do throws(HTTP1Error) {
                    let head = try HeadParser.parseRequest(headBytes)
                    let framing = try MessageFraming.request(head)
                    let receipt = Receipt(head: head, hashing: !server.drainOnly)
                    if head.expectsContinue { socket.output.add("HTTP/1.1 100 Continue\r\n\r\n") }
                    state = .body(head, BodyDecoder(framing), receipt)
                } catch {
                    return fail(400, "\(error)")
                }
            case .body(let head, var decoder, let receipt):
                let complete: Bool
                do throws(HTTP1Error) {
                    complete = try input.decodeBody(&decoder) { receipt.consume($0) }
                } catch {
                    return fail(400, "\(error)")
                }
                guard complete else {
                    state = .body(head, decoder, receipt)
                    return
                }
                requests += 1
                respond(head: head, body: receipt.json(connectionRequests: requests), status: 200)
                if !head.keepAlive {
                    state = .closing
                    return
                }
                state = .head(HeadScanner(limit: 64 * 1024))
                if input.count == 0 { return }
            }
        }
    }

    private func respond(head: RequestHead?, body: String, status: Int) {
        let bytes = Array(body.utf8)
        var response = "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Bad Request")\r\n"
        response += "Content-Type: application/json\r\nContent-Length: \(bytes.count)\r\n"
        if head?.keepAlive == false || status != 200 { response += "Connection: close\r\n" }
        response += "\r\n"
        socket.output.add(response)
        socket.output.add(bytes)
    }

    private func fail(_ status: Int, _ message: String) {
        respond(head: nil, body: JSON.object([("error", JSON.string(message))]), status: status)
        state = .closing
        socket.input.drain(socket.input.count)
    }
}
