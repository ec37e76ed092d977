internal import CNghttp2

/// libnghttp2's callbacks: capture-free trampolines that find the session in the user data
/// and call one method each. Nothing here throws through C: a refusal is an RST_STREAM or
/// GOAWAY the session submits, and an event for the caller.
extension HTTP2ServerSession {
    static func makeCallbacks() throws(HTTP2Error) -> OpaquePointer {
        var made: OpaquePointer?
        try check(nghttp2_session_callbacks_new(&made), "nghttp2_session_callbacks_new")
        guard let callbacks = made else {
            throw HTTP2Error(
                code: Int32(NGHTTP2_ERR_NOMEM.rawValue), operation: "nghttp2_session_callbacks_new")
        }
        nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks) { _, header, user in
            guard let header, let user else { return 0 }
            return HTTP2ServerSession.owner(user).beganFrame(header.pointee)
        }
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            return HTTP2ServerSession.owner(user).beganHeaders(frame.pointee)
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, let user else { return 0 }
            return HTTP2ServerSession.owner(user).receivedField(
                frame.pointee, name: UnsafeRawBufferPointer(start: name, count: nameLength),
                value: UnsafeRawBufferPointer(start: value, count: valueLength))
        }
        nghttp2_session_callbacks_set_on_invalid_header_callback(callbacks) {
            _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, let user else { return 0 }
            return HTTP2ServerSession.owner(user).receivedInvalidField(
                frame.pointee, name: UnsafeRawBufferPointer(start: name, count: nameLength),
                value: UnsafeRawBufferPointer(start: value, count: valueLength))
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            return HTTP2ServerSession.owner(user).receivedFrame(frame.pointee)
        }
        nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(callbacks) {
            _, frame, libraryError, user in
            guard let frame, let user else { return 0 }
            return HTTP2ServerSession.owner(user).receivedInvalidFrame(
                frame.pointee, libraryError: libraryError)
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) {
            _, _, streamID, data, length, user in
            guard let user else { return 0 }
            return HTTP2ServerSession.owner(user).receivedData(
                streamID: streamID, UnsafeRawBufferPointer(start: data, count: length))
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, code, user in
            guard let user else { return 0 }
            return HTTP2ServerSession.owner(user).closedStream(streamID, code: HTTP2ErrorCode(rawValue: code))
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, user in
            guard let frame, let user else { return 0 }
            return HTTP2ServerSession.owner(user).sentFrame(frame.pointee)
        }
        return callbacks
    }

    private static func owner(_ user: UnsafeMutableRawPointer) -> HTTP2ServerSession {
        Unmanaged<HTTP2ServerSession>.fromOpaque(user).takeUnretainedValue()
    }

    private static func isRequestHeaders(_ frame: nghttp2_frame) -> Bool {
        frame.hd.type == UInt8(NGHTTP2_HEADERS.rawValue) && frame.headers.cat == NGHTTP2_HCAT_REQUEST
    }

    private static func endsStream(_ frame: nghttp2_frame) -> Bool {
        frame.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
    }

    /// HEADERS on a client stream id below the last one opened, for a stream libnghttp2 no
    /// longer knows and this side did not reset: the ids went backwards, a connection error
    /// PROTOCOL_ERROR (RFC 9113 §5.1.1). libnghttp2 1.52 ignores such a block without a word.
    private func beganFrame(_ header: nghttp2_frame_hd) -> Int32 {
        chargeFrameBudget(header)
        let streamID = header.stream_id
        guard header.type == UInt8(NGHTTP2_HEADERS.rawValue), streamID % 2 == 1,
            streamID <= nghttp2_session_get_last_proc_stream_id(session),
            nghttp2_session_find_stream(session, streamID) == nil, !recentResets.contains(streamID)
        else { return 0 }
        _ = nghttp2_session_terminate_session(session, HTTP2ErrorCode.protocolError.rawValue)
        return 0
    }

    private func beganHeaders(_ frame: nghttp2_frame) -> Int32 {
        // Stream ids only grow (libnghttp2 refuses a reused one), so a record is never replaced.
        guard Self.isRequestHeaders(frame), streams[frame.hd.stream_id] == nil else { return 0 }
        streams[frame.hd.stream_id] = HTTP2Stream(maxHeaderListSize: Int(settings.maxHeaderListSize))
        return 0
    }

    /// A decoded field. Every field of a block costs libnghttp2 a check of each of its bytes
    /// before this callback, however few bytes it took on the wire (an HPACK reference to a
    /// 4 KiB table entry is one byte): a block that is refused, ignored or past the decoding
    /// bound answers NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE, and libnghttp2 decodes the rest of
    /// it without checks or callbacks (its HPACK table stays in step) and resets the stream,
    /// unless this side reset it first.
    private func receivedField(
        _ frame: nghttp2_frame, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer
    )
        -> Int32
    {
        let streamID = frame.hd.stream_id
        guard let stream = streams[streamID] else { return 0 }
        // Trailers (a second HEADERS) are accepted and ignored: only the request's own block counts.
        guard Self.isRequestHeaders(frame), stream.phase == .head, stream.builder != nil else {
            return ignoredField(stream, streamID, size: name.count + value.count + 32)
        }
        if let reason = stream.builder?.append(name: name, value: value) {
            refuse(streamID, reason)
            return Self.skipRestOfBlock
        }
        guard stream.builder?.exceedsDecodingBound == true else { return 0 }
        // Reported as too large (logged as a 431); the reset goes instead of the answer.
        stream.builder = nil
        stream.phase = .discarding
        stream.refusalReported = true
        resetForLoad(stream, streamID)
        enqueue(.headersTooLarge(streamID: streamID))
        return Self.skipRestOfBlock
    }

    /// libnghttp2's answer to stop decoding callbacks for the rest of a header block.
    private static let skipRestOfBlock = Int32(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)

    /// A field nobody reads (trailers, a block after the stream was refused): counted against
    /// `maxHeaderListSize`, past which the stream is reset.
    private func ignoredField(_ stream: HTTP2Stream, _ streamID: Int32, size: Int) -> Int32 {
        stream.ignoredListSize += size
        guard stream.ignoredListSize > Int(settings.maxHeaderListSize) else { return 0 }
        resetForLoad(stream, streamID)
        return Self.skipRestOfBlock
    }

    /// RST_STREAM ENHANCE_YOUR_CALM, submitted before libnghttp2 would send INTERNAL_ERROR.
    private func resetForLoad(_ stream: HTTP2Stream, _ streamID: Int32) {
        guard !stream.resetSeen else { return }
        stream.resetSeen = true
        _ = nghttp2_submit_rst_stream(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, HTTP2ErrorCode.enhanceYourCalm.rawValue)
    }

    private func receivedInvalidField(
        _ frame: nghttp2_frame, name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer
    ) -> Int32 {
        // libnghttp2 would drop the field silently; the request then differs from what the
        // client sent, so the stream is refused instead (nghttp2 answers PROTOCOL_ERROR).
        var probe = HTTP2RequestHeadBuilder(maxListSize: .max)
        streams[frame.hd.stream_id]?.pendingReason = probe.append(name: name, value: value) ?? .invalidField
        return Int32(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
    }

    private func receivedFrame(_ frame: nghttp2_frame) -> Int32 {
        let streamID = frame.hd.stream_id
        switch UInt32(frame.hd.type) {
        case NGHTTP2_HEADERS.rawValue:
            if Self.isRequestHeaders(frame) {
                finishHead(streamID, endStream: Self.endsStream(frame))
            } else if Self.endsStream(frame), streams[streamID]?.phase == .open {
                enqueue(.endStream(streamID: streamID))
            }
        case NGHTTP2_DATA.rawValue:
            if Self.endsStream(frame), streams[streamID]?.phase == .open {
                enqueue(.endStream(streamID: streamID))
            }
        case NGHTTP2_RST_STREAM.rawValue:
            receivedReset(streamID, code: HTTP2ErrorCode(rawValue: frame.rst_stream.error_code))
        case NGHTTP2_GOAWAY.rawValue:
            enqueue(
                .goaway(
                    lastStreamID: frame.goaway.last_stream_id,
                    code: HTTP2ErrorCode(rawValue: frame.goaway.error_code)))
        case NGHTTP2_PING.rawValue:
            if frame.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0 { receivedPingAck() }
        default:
            break
        }
        return 0
    }

    private func finishHead(_ streamID: Int32, endStream: Bool) {
        guard let stream = streams[streamID], stream.phase == .head, let builder = stream.builder else {
            return
        }
        stream.builder = nil
        switch builder.finish() {
        case .head(let head):
            stream.phase = .open
            stream.inboundSink = inboundSinks?(streamID)
            enqueue(.request(streamID: streamID, head: head, endStream: endStream))
        case .malformed(let reason):
            refuse(streamID, reason)
        case .tooLarge:
            stream.phase = .discarding
            stream.refusalReported = true
            enqueue(.headersTooLarge(streamID: streamID))
        }
    }

    /// Answers RST_STREAM PROTOCOL_ERROR and reports the reason (once).
    private func refuse(_ streamID: Int32, _ reason: HTTP2MalformedReason) {
        guard let stream = streams[streamID], !stream.refusalReported else { return }
        stream.phase = .discarding
        stream.builder = nil
        stream.refusalReported = true
        _ = nghttp2_submit_rst_stream(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, HTTP2ErrorCode.protocolError.rawValue)
        enqueue(.malformed(streamID: streamID, reason: reason))
    }

    private func receivedInvalidFrame(_ frame: nghttp2_frame, libraryError: Int32) -> Int32 {
        let streamID = frame.hd.stream_id
        guard let stream = streams[streamID], !stream.refusalReported else { return 0 }
        // libnghttp2 has answered RST_STREAM PROTOCOL_ERROR already for these two.
        let reason: HTTP2MalformedReason
        switch libraryError {
        case NGHTTP2_ERR_HTTP_HEADER.rawValue: reason = stream.pendingReason ?? .invalidField
        case NGHTTP2_ERR_HTTP_MESSAGING.rawValue: reason = .invalidMessage
        default: return 0
        }
        stream.phase = .discarding
        stream.refusalReported = true
        enqueue(.malformed(streamID: streamID, reason: reason))
        return 0
    }

    private func receivedData(streamID: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let stream = streams[streamID], stream.phase == .open, !stream.closed else {
            // Refused or unknown: nobody reads these bytes, the windows reopen at once.
            _ = nghttp2_session_consume(session, streamID, bytes.count)
            return 0
        }
        if stream.inboundSink != nil {
            stream.inboundSink!.write(bytes)
            stream.taken += bytes.count
        } else {
            stream.inbound.append(bytes)
        }
        stream.unconsumed += bytes.count
        unconsumedTotal += bytes.count
        enqueue(.data(streamID: streamID, count: bytes.count))
        return 0
    }

    /// A client reset: against the rapid-reset budget when no response was started.
    private func receivedReset(_ streamID: Int32, code: HTTP2ErrorCode) {
        guard let stream = streams[streamID] else { return }
        streams[streamID]?.resetSeen = true
        enqueue(.reset(streamID: streamID, code: code))
        guard !stream.responded else { return }
        resetBudget -= 1
        if resetBudget < 0 {
            _ = nghttp2_session_terminate_session(session, HTTP2ErrorCode.enhanceYourCalm.rawValue)
        }
    }

    private func closedStream(_ streamID: Int32, code: HTTP2ErrorCode) -> Int32 {
        guard let stream = streams[streamID], !stream.closed else { return 0 }
        // Bytes the caller will not consume any more still count against the connection window.
        if stream.unconsumed > 0 {
            _ = nghttp2_session_consume_connection(session, stream.unconsumed)
            unconsumedTotal -= stream.unconsumed
            stream.unconsumed = 0
        }
        // libnghttp2 resets a request whose END_STREAM leaves it short of its content-length
        // without an invalid-frame callback: the close code is the only sign.
        if code == .protocolError && !stream.resetSeen && !stream.refusalReported {
            stream.refusalReported = true
            enqueue(.malformed(streamID: streamID, reason: .invalidMessage))
        }
        if stream.responded && code == .noError {
            resetBudget = min(resetBudget + 1, settings.unansweredResetBudget)
        }
        stream.closed = true
        stream.inboundSink = nil
        queuedOutbound -= stream.outbound.count
        stream.outbound.removeAll()
        enqueue(.closed(streamID: streamID, code: code))
        return 0
    }

    private func sentFrame(_ frame: nghttp2_frame) -> Int32 {
        earnFrameBudget(sent: frame.hd)
        let type = UInt32(frame.hd.type)
        if type == NGHTTP2_RST_STREAM.rawValue {
            recentResets[recentResetNext] = frame.hd.stream_id
            recentResetNext = (recentResetNext + 1) % recentResets.count
        }
        if type == NGHTTP2_DATA.rawValue || type == NGHTTP2_HEADERS.rawValue, Self.endsStream(frame),
            let code = streams[frame.hd.stream_id]?.resetAfterResponse
        {
            streams[frame.hd.stream_id]?.resetAfterResponse = nil
            // A request that ended meanwhile closes with this frame: nothing to reset then.
            if nghttp2_session_get_stream_remote_close(session, frame.hd.stream_id) == 0 {
                streams[frame.hd.stream_id]?.resetSeen = true
                _ = nghttp2_submit_rst_stream(
                    session, UInt8(NGHTTP2_FLAG_NONE.rawValue), frame.hd.stream_id, code.rawValue)
            }
        }
        if frame.hd.type == UInt8(NGHTTP2_GOAWAY.rawValue),
            frame.goaway.error_code != HTTP2ErrorCode.noError.rawValue
        {
            enqueue(.terminating(code: HTTP2ErrorCode(rawValue: frame.goaway.error_code)))
        }
        return 0
    }

    /// The graceful shutdown's PING came back: every stream the client opened before it saw
    /// the notice has arrived, so the final GOAWAY can name the last one.
    private func receivedPingAck() {
        guard awaitingShutdownPing else { return }
        awaitingShutdownPing = false
        _ = nghttp2_submit_goaway(
            session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nghttp2_session_get_last_proc_stream_id(session),
            HTTP2ErrorCode.noError.rawValue, nil, 0)
    }
}
