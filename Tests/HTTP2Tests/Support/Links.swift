import HTTP2
import HTTPCore
import Testing

/// Drains a session's queued events.
func takeEvents(_ server: HTTP2ServerSession) -> [HTTP2Event] {
    var taken: [HTTP2Event] = []
    while let event = server.nextEvent() { taken.append(event) }
    return taken
}

/// Writes a session's output into an array.
func output(_ server: HTTP2ServerSession) throws -> [UInt8] {
    var sink = ByteArraySink()
    try server.writeOutput(into: &sink)
    return sink.bytes
}

/// A `TestClient` and a server session joined through memory.
final class ServerLink {
    let server: HTTP2ServerSession
    let client: TestClient
    /// Every event the server produced, in order (taken as they come).
    private(set) var events: [HTTP2Event] = []

    init(settings: HTTP2Settings = HTTP2Settings(), client: TestClient = TestClient()) throws {
        server = try HTTP2ServerSession(settings: settings)
        self.client = client
    }

    /// Moves bytes both ways until neither side has anything to write; returns the events
    /// of this run. `onEvent` may answer on the server (it runs between transfers).
    @discardableResult
    func pump(_ onEvent: (HTTP2Event) throws -> Void = { _ in }) throws -> [HTTP2Event] {
        var fresh: [HTTP2Event] = []
        for _ in 0..<100_000 {
            let handled = fresh.count
            let request = client.output()
            if !request.isEmpty { try request.withUnsafeBytes { try server.receive($0) } }
            try collect(&fresh, onEvent)
            let answer = try output(server)
            if !answer.isEmpty {
                let used = client.receive(answer)
                precondition(used >= 0, "the client refused the server's bytes: \(used)")
            }
            try collect(&fresh, onEvent)
            if request.isEmpty && answer.isEmpty && fresh.count == handled { return fresh }
        }
        Issue.record("the link did not settle")
        return fresh
    }

    private func collect(_ fresh: inout [HTTP2Event], _ onEvent: (HTTP2Event) throws -> Void) throws {
        while let event = server.nextEvent() {
            events.append(event)
            fresh.append(event)
            try onEvent(event)
        }
    }
}

/// A raw `FrameWriter` client and a server session: hostile input in, frames out.
final class RawLink {
    let server: HTTP2ServerSession
    let writer = FrameWriter()
    /// Every frame the server wrote.
    private(set) var frames: [Frame] = []
    /// Every event the server produced.
    private(set) var events: [HTTP2Event] = []

    init(settings: HTTP2Settings = HTTP2Settings(), preface: Bool = true) throws {
        server = try HTTP2ServerSession(settings: settings)
        if preface { writer.preface() }
    }

    /// Feeds what was written to the server, then takes its events and output; returns
    /// the frames of this run.
    @discardableResult
    func send() throws -> [Frame] {
        let bytes = writer.take()
        try bytes.withUnsafeBytes { try server.receive($0) }
        events += takeEvents(server)
        let written = Frame.parse(try output(server))
        events += takeEvents(server)
        frames += written
        return written
    }

    /// The frames of one type.
    func frames(ofType type: UInt8) -> [Frame] { frames.filter { $0.type == type } }
}
