import HTTP2
import HTTPCore

/// Frames after the client preface into a server session, fed in reads of a size taken from
/// the first byte, with a caller that answers every request, echoes its body and consumes
/// it: no crash, and no stream holding more than its window.
///
/// Whole and split runs are not compared: the caller answers between reads, so a split
/// changes what the session has sent when the next frame arrives (a stream answered before
/// its RST_STREAM does not count as a rapid reset), and the events may rightly differ.
///
/// Seeds (Fuzz/Seeds/FuzzH2, hand-written with Debian's python3-hpack): a GET; a POST with a
/// content-length and two DATA frames; a header block over HEADERS and 9 CONTINUATIONs;
/// 30 streams opened and reset; PING, WINDOW_UPDATE, DATA, trailers and GOAWAY.
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
    var transcript = Transcript()
    var start = 0
    for cut in cuts + [input.count] where cut >= start {
        do {
            try input[start..<cut].withUnsafeBytes { try session.receive($0) }
            try drive(session, settings, &transcript)
        } catch {
            transcript.failure = (error as? HTTP2Error)?.code ?? 0
            return transcript
        }
        start = cut
    }
    return transcript
}

/// Takes the events, answers them and writes the output until nothing moves.
func drive(_ session: HTTP2ServerSession, _ settings: HTTP2Settings, _ transcript: inout Transcript)
    throws(HTTP2Error)
{
    var output = CountingSink()
    repeat {
        while let event = session.nextEvent() {
            transcript.events.append(event)
            try answer(event, session, settings)
        }
    } while try session.writeOutput(into: &output) > 0
}

func answer(_ event: HTTP2Event, _ session: HTTP2ServerSession, _ settings: HTTP2Settings) throws(HTTP2Error)
{
    switch event {
    case .request(let streamID, _, let endStream):
        try session.respond(streamID: streamID, status: 200, fields: HeaderFields(), hasBody: true)
        if endStream { session.endStream(streamID: streamID) }
    case .data(let streamID, let count):
        // A stream holds at most its window: ours once the client acknowledged our SETTINGS,
        // the protocol's 65,535 before (RFC 9113 §6.9.2: DATA sent before the ACK may use it).
        let window = max(Int(settings.initialStreamWindow), 65_535)
        precondition(session.inboundCount(streamID: streamID) <= window)
        // The count is what arrived since the last event; what is readable may differ (a
        // stream reset meanwhile drops what it held, and a read takes what later DATA brought):
        // the bound above is the invariant.
        var echo = ByteArraySink()
        _ = session.readInbound(streamID: streamID, into: &echo)
        echo.bytes.withUnsafeBytes { session.send(streamID: streamID, bytes: $0) }
        session.consume(streamID: streamID, count: echo.bytes.count)
    case .endStream(let streamID):
        session.endStream(streamID: streamID)
    case .headersTooLarge(let streamID):
        try session.respond(streamID: streamID, status: 431, fields: HeaderFields(), hasBody: false)
    default:
        break
    }
}
