internal import CNghttp2
public import HTTPCore

/// The server side of one HTTP/2 connection over libnghttp2, driven by bytes: the caller
/// feeds what it read (`receive`), takes the events (`nextEvent`), answers (`respond`,
/// `send`, `endStream`) and writes what the session produced (`writeOutput`).
///
/// One per connection, used on one thread (the connection's loop); no call blocks. The
/// session does the protocol: HPACK, SETTINGS, PING, flow control, stream states and the
/// abuse limits of `HTTP2Settings`. Requests are validated (RFC 9113 §8.2, §8.3.1) and a
/// malformed one is answered RST_STREAM PROTOCOL_ERROR by the session itself. Trailers of a
/// request are accepted and ignored (only their END_STREAM counts).
///
/// Flow control is backpressure: a stream's window reopens only as the caller calls
/// `consume(streamID:count:)` for bytes it handed on, so the body bytes a stream holds are
/// at most `HTTP2Settings.initialStreamWindow`.
public final class HTTP2ServerSession {
    /// The limits this session enforces.
    public let settings: HTTP2Settings
    // The nghttp2_session; its user data is this object, unretained: the session is freed
    // in deinit, and callbacks run only inside calls made on this object.
    // swift-format-ignore: NeverUseImplicitlyUnwrappedOptionals
    var session: OpaquePointer!
    var streams = StreamTable<HTTP2Stream>()
    /// The sum of the streams' `outbound` counts (`queuedOutboundCount`).
    var queuedOutbound = 0
    /// The sum of the streams' `unconsumed` counts: received bytes the connection window
    /// stays closed by.
    var unconsumedTotal = 0
    private var events: [HTTP2Event] = []
    private var eventHead = 0
    /// What is left of `settings.unansweredResetBudget`.
    var resetBudget: Int
    /// What is left of `settings.unproductiveFrameBudget`.
    var frameBudget: Int
    /// The graceful shutdown: the notice was sent and a PING waits for its ACK.
    var awaitingShutdownPing = false
    /// The last streams this side reset (a ring): frames the client had in flight on them
    /// are ignored (RFC 9113 §5.1, "closed"), not taken for a stream id gone backwards.
    var recentResets = [Int32](repeating: 0, count: 64)
    var recentResetNext = 0

    /// Creates a session and queues the server's SETTINGS and the connection WINDOW_UPDATE
    /// (written by the first `writeOutput`). Throws when libnghttp2 cannot allocate.
    public init(settings: HTTP2Settings = HTTP2Settings()) throws(HTTP2Error) {
        self.settings = settings
        resetBudget = settings.unansweredResetBudget
        frameBudget = settings.unproductiveFrameBudget
        var option: OpaquePointer?
        try Self.check(nghttp2_option_new(&option), "nghttp2_option_new")
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_no_auto_window_update(option, 1)
        nghttp2_option_set_max_continuations(option, settings.maxContinuations)
        nghttp2_option_set_max_settings(option, settings.maxSettingsEntries)
        nghttp2_option_set_max_outbound_ack(option, settings.maxOutboundAcks)
        nghttp2_option_set_stream_reset_rate_limit(option, settings.resetBurst, settings.resetRate)
        let callbacks = try Self.makeCallbacks()
        defer { nghttp2_session_callbacks_del(callbacks) }
        let me = Unmanaged.passUnretained(self).toOpaque()
        try Self.check(
            nghttp2_session_server_new2(&session, callbacks, me, option), "nghttp2_session_server_new2")
        try submitSettings()
    }

    deinit {
        nghttp2_session_del(session)
    }

    /// Feeds bytes read from the connection (the client preface first). Events are queued.
    ///
    /// Throws a fatal `HTTP2Error` when the connection cannot go on (no preface, a
    /// CONTINUATION flood, a peer that does not read its ACKs): the caller closes it.
    /// Protocol errors that libnghttp2 answers with GOAWAY do not throw: they queue
    /// `.terminating` when the GOAWAY is written.
    public func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP2Error) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let used = nghttp2_session_mem_recv(session, base, bytes.count)
        if used < 0 { throw HTTP2Error(code: Int32(used), operation: "nghttp2_session_mem_recv") }
    }

    /// Writes every frame the session has ready into `sink` (response DATA as far as the
    /// peer's windows and the outbound queues allow); returns the byte count.
    @discardableResult
    public func writeOutput(into sink: inout some ByteSink) throws(HTTP2Error) -> Int {
        var total = 0
        while true {
            var chunk: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &chunk)
            if count < 0 { throw HTTP2Error(code: Int32(count), operation: "nghttp2_session_mem_send") }
            guard count > 0, let chunk else { return total }
            sink.write(UnsafeRawBufferPointer(start: chunk, count: count))
            total += count
        }
    }

    /// Whether the session still reads (false once GOAWAY ended it and no stream is left).
    public var wantsRead: Bool { nghttp2_session_want_read(session) != 0 }

    /// Whether the session has frames to write (or will, once a deferred body resumes).
    public var wantsWrite: Bool { nghttp2_session_want_write(session) != 0 }

    /// The next event, or nil when none is queued. Taking `.closed` drops that stream.
    public func nextEvent() -> HTTP2Event? {
        guard eventHead < events.count else { return nil }
        let event = events[eventHead]
        eventHead += 1
        if eventHead == events.count {
            events.removeAll(keepingCapacity: events.capacity <= 256)
            eventHead = 0
        }
        if case .closed(let streamID, _) = event { streams[streamID] = nil }
        return event
    }

    /// The highest stream id the session has processed (for logs and GOAWAY).
    public var lastProcessedStreamID: Int32 { nghttp2_session_get_last_proc_stream_id(session) }

    /// Streams the session keeps a record for (open ones, and closed ones whose `.closed`
    /// the caller has not taken yet).
    public var streamRecordCount: Int { streams.count }

    /// Whether a request header block has begun and not ended: HEADERS without END_HEADERS,
    /// its CONTINUATION frames still to come (no other frame may come meanwhile, RFC 9113
    /// §6.10).
    public var receivingHeaderBlock: Bool { streams.contains { $0.phase == .head } }

    /// The request body bytes of `streamID` not yet read by `readInbound`.
    public func inboundCount(streamID: Int32) -> Int {
        streams[streamID]?.inbound.count ?? 0
    }

    /// Moves up to `maxCount` request body bytes of `streamID` into `sink`; returns how
    /// many. The window stays closed for them until `consume`.
    @discardableResult
    public func readInbound(streamID: Int32, into sink: inout some ByteSink, maxCount: Int = .max) -> Int {
        guard let stream = streams[streamID] else { return 0 }
        let count = stream.inbound.pop(into: &sink, maxCount: maxCount)
        stream.taken += count
        return count
    }

    /// From now on writes `streamID`'s request body bytes to `sink` as the DATA arrives (what
    /// is queued first), instead of queueing them for `readInbound`: one copy of each byte
    /// fewer. `nil` goes back to queueing. The `.data` events still come, and the window
    /// still opens only by `consume`. The session keeps `sink` until then, or until the
    /// stream closes.
    public func deliverInbound(streamID: Int32, to sink: (any ByteSink)?) {
        guard let stream = streams[streamID] else { return }
        stream.inboundSink = sink
        guard var sink, !stream.inbound.isEmpty else { return }
        stream.taken += stream.inbound.pop(into: &sink, maxCount: .max)
    }

    /// Where each request's DATA goes from its head on: asked once per valid request head,
    /// before its `.request` event is queued, so none of its body waits in the session (one
    /// copy fewer than `deliverInbound` after the event). A `nil` answer, or none set, queues
    /// the DATA for `readInbound`. Called from within `receive`: it must not call the session.
    public var inboundSinks: ((_ streamID: Int32) -> (any ByteSink)?)?

    /// Whether the session is done: it neither reads nor has anything to write.
    public var isDone: Bool { !wantsRead && !wantsWrite }

    /// The request body bytes of `streamID` handed to the caller so far (read, or written to
    /// its sink); `nil` once the session forgot the stream.
    public func takenCount(streamID: Int32) -> Int? {
        streams[streamID]?.taken
    }

    /// Tells the client it may send `count` more bytes on `streamID` (and the connection):
    /// the caller has handed that many request body bytes on. Counts beyond what was
    /// received are a programming error; a stream already closed is ignored.
    public func consume(streamID: Int32, count: Int) {
        guard count > 0, let stream = streams[streamID], !stream.closed else { return }
        precondition(
            count <= stream.unconsumed, "consume(\(count)) beyond the \(stream.unconsumed) bytes received")
        stream.unconsumed -= count
        unconsumedTotal -= count
        // Only fails for stream 0 or a count of 0, excluded above.
        _ = nghttp2_session_consume(session, streamID, count)
        acknowledge(stream, streamID)
    }

    /// Acknowledges what was consumed (WINDOW_UPDATE) once it reaches an eighth of the window,
    /// for the stream and for the connection, rather than libnghttp2's half: a client whose
    /// view of a window lags (a stream opened before our SETTINGS arrived) must not wait for an
    /// acknowledgement that would come only after more data it cannot send. The windows stay
    /// at their configured size: only consumed bytes are acknowledged. libnghttp2's count of
    /// bytes received and not acknowledged includes those still held (`unconsumed`): they
    /// are left out, or a client would be let in a window ahead of what was handed on.
    private func acknowledge(_ stream: HTTP2Stream, _ streamID: Int32) {
        let streamReceived = nghttp2_session_get_stream_effective_recv_data_length(session, streamID)
        let streamConsumed = streamReceived - Int32(stream.unconsumed)
        if streamConsumed > 0, streamConsumed >= settings.initialStreamWindow / 8 {
            _ = nghttp2_submit_window_update(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, streamConsumed)
        }
        let received = nghttp2_session_get_effective_recv_data_length(session)
        let consumed = received - Int32(unconsumedTotal)
        if consumed > 0, consumed >= settings.connectionWindow / 8 {
            _ = nghttp2_submit_window_update(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, consumed)
        }
    }

    func enqueue(_ event: HTTP2Event) {
        if case .data(let streamID, let count) = event, eventHead < events.count,
            case .data(streamID, let previous) = events[events.count - 1]
        {
            events[events.count - 1] = .data(streamID: streamID, count: previous + count)
            return
        }
        events.append(event)
    }

    private func submitSettings() throws(HTTP2Error) {
        var entries = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: settings.maxConcurrentStreams),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue),
                value: UInt32(settings.initialStreamWindow)),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                value: settings.maxHeaderListSize),
        ]
        let submitted = nghttp2_submit_settings(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count)
        try Self.check(submitted, "nghttp2_submit_settings")
        let window = nghttp2_session_set_local_window_size(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0, settings.connectionWindow)
        try Self.check(window, "nghttp2_session_set_local_window_size")
    }

    static func check(_ result: Int32, _ operation: String) throws(HTTP2Error) {
        if result < 0 { throw HTTP2Error(code: result, operation: operation) }
    }
}
