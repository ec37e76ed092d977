import HTTP1
import HTTP2
import HTTPCore
import ProxyCore

/// Frames after the client preface into a server session, fed in reads of a size taken from
/// the first byte, with an `Exchange` behind every request as the proxy runs one
/// (`FuzzStream`): a pass-through route, a multipart route with rules (`/m`) and a spooled one
/// (`/b`), an upstream that answers once the body was read, timers fired at the end. No
/// crash; no stream holds more than its window; the window is given back only for bytes the
/// exchange handed on; every stream the session closes has its exchange ended, with one log
/// record.
///
/// Whole and split runs are not compared: the caller answers between reads, so a split
/// changes what the session has sent when the next frame arrives (a stream answered before
/// its RST_STREAM does not count as a rapid reset), and the events may rightly differ.
///
/// Seeds (Fuzz/Seeds/FuzzH2, hand-written with Debian's python3-hpack): a GET; a POST with a
/// content-length and two DATA frames; a header block over HEADERS and 9 CONTINUATIONs;
/// 30 streams opened and reset; PING, WINDOW_UPDATE, DATA, trailers and GOAWAY; multipart
/// POSTs to `/m` and `/b` (literal, not Huffman-coded, header names and values).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzH2(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let input = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8) + bytes.dropFirst()
    let read = bytes[0] == 0 ? input.count : Int(bytes[0])
    _ = run(input, cuts: Array(stride(from: read, to: input.count, by: read)))
    return 0
}

/// What the caller saw: the events in order and whether the session threw.
struct Transcript {
    var events: [HTTP2Event] = []
    var failure: Int32?
}

func run(_ input: [UInt8], cuts: [Int]) -> Transcript {
    var settings = HTTP2Settings()
    settings.initialStreamWindow = 4096
    settings.connectionWindow = 16384
    settings.maxConcurrentStreams = 8
    settings.maxHeaderListSize = 2048
    settings.unansweredResetBudget = 16
    guard let session = try? HTTP2ServerSession(settings: settings) else { return Transcript() }
    let driver = Driver(session: session, settings: settings)
    var transcript = Transcript()
    var start = 0
    for cut in cuts + [input.count] where cut >= start {
        do {
            try input[start..<cut].withUnsafeBytes { try session.receive($0) }
            try driver.drive(&transcript)
        } catch {
            transcript.failure = (error as? HTTP2Error)?.code ?? 0
            break
        }
        start = cut
    }
    for stream in driver.streams.values { stream.fireTimers() }
    try? driver.drive(&transcript)
    return transcript
}

/// The proxy's side of the connection: one `FuzzStream` per request.
final class Driver {
    let session: HTTP2ServerSession
    let settings: HTTP2Settings
    let proxy: ProxySettings
    var streams: [Int32: FuzzStream] = [:]

    init(session: HTTP2ServerSession, settings: HTTP2Settings) {
        self.session = session
        self.settings = settings
        var rules = Route(pathPrefix: "/m", requestBody: .stream, rewritesMultipart: true)
        rules.rules.dropFields = ["token"]
        rules.rules.renameFields = ["userfile": "file"]
        rules.rules.digests = [.sha256, .size]
        let spooled = Route(pathPrefix: "/b", requestBody: .buffer, rewritesMultipart: true)
        var limits = Limits()
        limits.bodyBytes = 1 << 20
        proxy = ProxySettings(
            routes: RouteTable([rules, spooled]),
            upstream: UpstreamURL(scheme: .http, host: "127.0.0.1", port: 9),
            limits: limits, highWater: 2048)
    }

    /// Takes the events, hands them to the streams and writes the output until nothing moves.
    func drive(_ transcript: inout Transcript) throws(HTTP2Error) {
        var output = CountingSink()
        repeat {
            while let event = session.nextEvent() {
                transcript.events.append(event)
                try dispatch(event)
            }
        } while try session.writeOutput(into: &output) > 0
    }

    private func dispatch(_ event: HTTP2Event) throws(HTTP2Error) {
        switch event {
        case .request(let streamID, let head, let endStream):
            start(streamID, head, endStream: endStream)
        case .data(let streamID, _):
            let window = max(Int(settings.initialStreamWindow), 65_535)
            // A stream holds at most its window: ours once the client acknowledged our
            // SETTINGS, the protocol's 65,535 before (RFC 9113 §6.9.2).
            precondition(session.inboundCount(streamID: streamID) <= window)
            streams[streamID]?.dataArrived()
        case .endStream(let streamID):
            streams[streamID]?.endOfStream()
        case .reset(let streamID, _):
            streams[streamID]?.clientGone()
        case .closed(let streamID, _):
            streams.removeValue(forKey: streamID)?.streamClosed()
        case .headersTooLarge(let streamID):
            try session.respond(streamID: streamID, status: 431, fields: HeaderFields(), hasBody: false)
        default:
            break
        }
    }

    private func start(_ streamID: Int32, _ head: HTTP2RequestHead, endStream: Bool) {
        var fields = HeaderFields()
        if let authority = head.authority, !head.fields.contains("host") {
            fields.append(name: "Host", value: authority)
        }
        head.fields.forEachField { name, value in fields.append(name: name, value: value) }
        let request = RequestHead(method: head.method, target: head.path, version: .http2, headers: fields)
        guard let framing = try? MessageFraming.http2Request(request, endsStream: endStream) else {
            try? session.reset(streamID: streamID, code: .protocolError)
            return
        }
        let stream = FuzzStream(
            id: streamID, head: request, framing: framing, session: session, settings: proxy)
        streams[streamID] = stream
        if endStream { stream.endOfStream() }
    }
}
