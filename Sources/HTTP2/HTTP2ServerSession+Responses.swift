internal import CNghttp2
public import HTTPCore

/// Answers: response heads, bodies pulled from per-stream queues, resets and GOAWAY.
extension HTTP2ServerSession {
    /// Submits the final response head of `streamID`: `:status`, then `fields` with their
    /// names lowercased (HPACK carries lowercase names). With `hasBody`, DATA follows from
    /// the bytes given to `send` until `endStream`; without, the HEADERS end the stream.
    ///
    /// The caller leaves out connection-specific fields (RFC 9113 §8.2.2). A stream that is
    /// closed already (its `.closed` queued or taken) or reset is not answered; a second final
    /// answer throws NGHTTP2_ERR_INVALID_STATE (not fatal; libnghttp2 would send it).
    public func respond(streamID: Int32, status: Int, fields: HeaderFields, hasBody: Bool) throws(HTTP2Error)
    {
        guard let stream = streams[streamID], !stream.closed, !stream.resetSeen else { return }
        guard !stream.responded else {
            throw HTTP2Error(
                code: Int32(NGHTTP2_ERR_INVALID_STATE.rawValue), operation: "respond (answered already)")
        }
        let result = withFieldList(status: status, fields: fields) { list in
            guard hasBody else {
                return nghttp2_submit_response(session, streamID, list.baseAddress, list.count, nil)
            }
            var provider = nghttp2_data_provider(
                source: nghttp2_data_source(fd: 0),
                read_callback: { _, streamID, buffer, length, flags, _, user in
                    guard let user, let buffer, let flags else {
                        return ssize_t(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)
                    }
                    let owner = Unmanaged<HTTP2ServerSession>.fromOpaque(user).takeUnretainedValue()
                    return owner.readBody(
                        streamID: streamID, into: UnsafeMutableRawBufferPointer(start: buffer, count: length),
                        flags: flags)
                })
            return nghttp2_submit_response(session, streamID, list.baseAddress, list.count, &provider)
        }
        try Self.check(result, "nghttp2_submit_response")
        stream.responded = true
    }

    /// Submits a non-final (1xx) response head, e.g. 100 for a request that sent
    /// `expect: 100-continue`. A stream that is closed already is not answered.
    public func informational(streamID: Int32, status: Int = 100, fields: HeaderFields = HeaderFields())
        throws(HTTP2Error)
    {
        guard streams[streamID]?.closed == false else { return }
        precondition((100..<200).contains(status), "informational status \(status)")
        let result = withFieldList(status: status, fields: fields) { list in
            nghttp2_submit_headers(
                session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, nil, list.baseAddress, list.count, nil)
        }
        try Self.check(result, "nghttp2_submit_headers")
    }

    /// Appends response body bytes of `streamID` (copied); libnghttp2 takes them as the
    /// client's windows allow (`outboundCount` is what waits). Bytes sent before `respond`
    /// wait for it; bytes for a stream that is closed, or after `endStream`, are dropped.
    public func send(streamID: Int32, bytes: UnsafeRawBufferPointer) {
        guard let stream = streams[streamID], !stream.closed, !stream.outboundEnded, !bytes.isEmpty else {
            return
        }
        stream.outbound.append(bytes)
        queuedOutbound += bytes.count
        resumeIfDeferred(stream, streamID)
    }

    /// Marks the end of the response body of `streamID`: END_STREAM goes with the last DATA.
    public func endStream(streamID: Int32) {
        guard let stream = streams[streamID], !stream.closed else { return }
        stream.outboundEnded = true
        resumeIfDeferred(stream, streamID)
    }

    /// Resets `streamID` with `code` now (CANCEL, INTERNAL_ERROR): a response not yet
    /// written is dropped. After an early answer use `resetWhenAnswered`.
    public func reset(streamID: Int32, code: HTTP2ErrorCode) throws(HTTP2Error) {
        // A stream closed already (libnghttp2 reset it itself) gets no second RST_STREAM.
        guard streams[streamID]?.closed != true else { return }
        let result = nghttp2_submit_rst_stream(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, code.rawValue)
        try Self.check(result, "nghttp2_submit_rst_stream")
        streams[streamID]?.resetSeen = true
    }

    /// Resets `streamID` with `code` once the response's END_STREAM has been written: an
    /// answer given before the request body ended (RFC 9113 §8.1: NO_ERROR tells the client
    /// to stop sending it and keep the response). `reset` at once would overtake the
    /// response: libnghttp2 writes RST_STREAM ahead of queued HEADERS and DATA.
    public func resetWhenAnswered(streamID: Int32, code: HTTP2ErrorCode = .noError) throws(HTTP2Error) {
        guard let stream = streams[streamID], !stream.closed else { return }
        if nghttp2_session_get_stream_local_close(session, streamID) == 1 {
            try reset(streamID: streamID, code: code)
        } else {
            streams[streamID]?.resetAfterResponse = code
        }
    }

    /// Starts a graceful shutdown: a GOAWAY notice (last stream 2^31-1) and a PING; when the
    /// PING's ACK arrives, the final GOAWAY names the last stream processed. Streams up to
    /// it finish; later ones are ignored. Once all are closed, `wantsRead` and
    /// `wantsWrite` are false and the caller closes the connection.
    public func shutdown() throws(HTTP2Error) {
        try Self.check(nghttp2_submit_shutdown_notice(session), "nghttp2_submit_shutdown_notice")
        try Self.check(
            nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil), "nghttp2_submit_ping")
        awaitingShutdownPing = true
    }

    /// Ends the connection now: GOAWAY with `code` (e.g. ENHANCE_YOUR_CALM) and the last
    /// stream processed; the session reads no more and `wantsWrite` turns false once the
    /// GOAWAY is written.
    public func goAway(code: HTTP2ErrorCode) throws(HTTP2Error) {
        try Self.check(
            nghttp2_session_terminate_session(session, code.rawValue), "nghttp2_session_terminate_session")
    }

    /// Response body bytes queued on all streams that libnghttp2 has not taken yet.
    public var queuedOutboundCount: Int { queuedOutbound }

    /// Response body bytes of `streamID` waiting for the client's window (the caller's
    /// high-water mark for pausing its upstream).
    public func outboundCount(streamID: Int32) -> Int {
        streams[streamID]?.outbound.count ?? 0
    }

    /// Whether the client's window (stream or connection) is closed for `streamID` while
    /// response bytes wait: the caller arms its zero-window stall timer on this.
    public func isPeerWindowClosed(streamID: Int32) -> Bool {
        guard outboundCount(streamID: streamID) > 0 else { return false }
        return nghttp2_session_get_stream_remote_window_size(session, streamID) <= 0
    }

    /// libnghttp2 pulls response bytes: copies what is queued, EOF after the end, or defers
    /// until `send`/`endStream` resume the stream.
    func readBody(
        streamID: Int32, into buffer: UnsafeMutableRawBufferPointer, flags: UnsafeMutablePointer<UInt32>
    )
        -> ssize_t
    {
        guard let stream = streams[streamID] else {
            return ssize_t(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        let copied = stream.outbound.pop(into: buffer)
        queuedOutbound -= copied
        if stream.outbound.isEmpty && stream.outboundEnded {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
        } else if copied == 0 {
            stream.deferred = true
            return ssize_t(NGHTTP2_ERR_DEFERRED.rawValue)
        }
        return copied
    }

    private func resumeIfDeferred(_ stream: HTTP2Stream, _ streamID: Int32) {
        guard stream.deferred else { return }
        stream.deferred = false
        // Fails only when the stream is gone or not deferred; then there is nothing to resume.
        _ = nghttp2_session_resume_data(session, streamID)
    }

    /// Lays `:status` and the fields (names lowercased) out in one temporary buffer and calls
    /// `body` with the nv list over it (libnghttp2 copies both when it submits).
    private func withFieldList(
        status: Int, fields: HeaderFields, _ body: (UnsafeBufferPointer<nghttp2_nv>) -> Int32
    ) -> Int32 {
        // Names and values take less than their serialized form; `:status` and its digits 28.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: fields.serializedCount + 28) { bytes in
            withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: fields.count + 1) { list in
                let base = bytes.baseAddress!
                var at = 0
                // A status's digits make a small string: no allocation.
                for byte in ":status".utf8 {
                    base[at] = byte
                    at += 1
                }
                for byte in String(status).utf8 {
                    base[at] = byte
                    at += 1
                }
                let digits = at - 7
                let flags = UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
                list.initializeElement(
                    at: 0,
                    to: nghttp2_nv(name: base, value: base + 7, namelen: 7, valuelen: digits, flags: flags))
                var count = 1
                fields.forEachField { name, value in
                    let nameStart = at
                    for byte in name {
                        base[at] = byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte
                        at += 1
                    }
                    let valueStart = at
                    if let source = value.baseAddress, !value.isEmpty {
                        (base + at).initialize(from: source, count: value.count)
                        at += value.count
                    }
                    list.initializeElement(
                        at: count,
                        to: nghttp2_nv(
                            name: base + nameStart, value: base + valueStart, namelen: name.count,
                            valuelen: value.count, flags: flags))
                    count += 1
                }
                return body(UnsafeBufferPointer(start: list.baseAddress, count: count))
            }
        }
    }
}
