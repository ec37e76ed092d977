import CNghttp2

/// A test-only HTTP/2 client over libnghttp2's client session, talking to the server
/// session through memory (`ServerLink`). It uploads request bodies from arrays (or
/// deferred until `appendBody`) and records every response.
final class TestClient {
    /// What the client saw of one stream.
    struct Response {
        var informational: [Int] = []
        var status: Int?
        var fields: [(String, String)] = []
        var body: [UInt8] = []
        var closeCode: UInt32?
        var resetCode: UInt32?
    }

    private struct Upload {
        var bytes: [UInt8]
        var offset = 0
        var ended: Bool
        var deferred = false
    }

    // swift-format-ignore: NeverUseImplicitlyUnwrappedOptionals
    private var session: OpaquePointer!
    private(set) var responses: [Int32: Response] = [:]
    private var uploads: [Int32: Upload] = [:]
    /// GOAWAY frames received: last stream id and code, in order.
    private(set) var goaways: [(lastStreamID: Int32, code: UInt32)] = []

    /// A client; `initialWindow` is its SETTINGS_INITIAL_WINDOW_SIZE for responses and
    /// `autoWindowUpdate: false` keeps its windows closed (a reader that never reads).
    init(initialWindow: Int32 = 1 << 20, autoWindowUpdate: Bool = true) {
        var callbacks: OpaquePointer?
        precondition(nghttp2_session_callbacks_new(&callbacks) == 0)
        defer { nghttp2_session_callbacks_del(callbacks) }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) {
            _, frame, name, nameLength, value, valueLength, _, user in
            let client = Unmanaged<TestClient>.fromOpaque(user!).takeUnretainedValue()
            client.receivedField(
                frame!.pointee.hd.stream_id,
                String(decoding: UnsafeRawBufferPointer(start: name, count: nameLength), as: UTF8.self),
                String(decoding: UnsafeRawBufferPointer(start: value, count: valueLength), as: UTF8.self))
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) {
            _, _, streamID, data, length, user in
            let client = Unmanaged<TestClient>.fromOpaque(user!).takeUnretainedValue()
            client.responses[streamID, default: Response()].body.append(
                contentsOf: UnsafeBufferPointer(start: data, count: length))
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            let client = Unmanaged<TestClient>.fromOpaque(user!).takeUnretainedValue()
            let frame = frame!.pointee
            if frame.hd.type == UInt8(NGHTTP2_GOAWAY.rawValue) {
                client.goaways.append((frame.goaway.last_stream_id, frame.goaway.error_code))
            } else if frame.hd.type == UInt8(NGHTTP2_RST_STREAM.rawValue) {
                client.responses[frame.hd.stream_id, default: Response()].resetCode =
                    frame.rst_stream.error_code
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, code, user in
            let client = Unmanaged<TestClient>.fromOpaque(user!).takeUnretainedValue()
            client.responses[streamID, default: Response()].closeCode = code
            return 0
        }
        var option: OpaquePointer?
        precondition(nghttp2_option_new(&option) == 0)
        defer { nghttp2_option_del(option) }
        if !autoWindowUpdate { nghttp2_option_set_no_auto_window_update(option, 1) }
        let me = Unmanaged.passUnretained(self).toOpaque()
        precondition(nghttp2_session_client_new2(&session, callbacks, me, option) == 0)
        var entries = [
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue),
                value: UInt32(initialWindow))
        ]
        precondition(nghttp2_submit_settings(session, 0, &entries, entries.count) == 0)
    }

    deinit {
        nghttp2_session_del(session)
    }

    /// Submits a request; `body` nil sends END_STREAM on HEADERS, `endBody: false` keeps
    /// the body open for `appendBody`. Returns the stream id.
    @discardableResult
    func request(
        method: String = "GET", path: String = "/", fields: [(String, String)] = [], body: [UInt8]? = nil,
        endBody: Bool = true
    ) -> Int32 {
        let head =
            [(":method", method), (":scheme", "https"), (":authority", "example.test"), (":path", path)]
            + fields
        let streamID = withNV(head) { list -> Int32 in
            guard body != nil else {
                return nghttp2_submit_request(session, nil, list.baseAddress, list.count, nil, nil)
            }
            var provider = nghttp2_data_provider(
                source: nghttp2_data_source(fd: 0),
                read_callback: { _, streamID, buffer, length, flags, _, user in
                    let client = Unmanaged<TestClient>.fromOpaque(user!).takeUnretainedValue()
                    return client.readUpload(
                        streamID, UnsafeMutableRawBufferPointer(start: buffer, count: length), flags!)
                })
            return nghttp2_submit_request(session, nil, list.baseAddress, list.count, &provider, nil)
        }
        precondition(streamID > 0, "nghttp2_submit_request: \(streamID)")
        if let body { uploads[streamID] = Upload(bytes: body, ended: endBody) }
        return streamID
    }

    /// Adds body bytes to an open upload (and ends it with `end`).
    func appendBody(_ streamID: Int32, _ bytes: [UInt8], end: Bool) {
        uploads[streamID]!.bytes += bytes
        uploads[streamID]!.ended = end
        if uploads[streamID]!.deferred {
            uploads[streamID]!.deferred = false
            precondition(nghttp2_session_resume_data(session, streamID) == 0)
        }
    }

    /// Upload bytes not yet taken by the session (a stalled upload keeps them).
    func pendingUpload(_ streamID: Int32) -> Int {
        uploads[streamID].map { $0.bytes.count - $0.offset } ?? 0
    }

    /// Resets a stream.
    func reset(_ streamID: Int32, code: UInt32) {
        precondition(nghttp2_submit_rst_stream(session, 0, streamID, code) == 0)
    }

    /// Gives the server back `count` bytes of response window on `streamID`.
    func consume(_ streamID: Int32, _ count: Int) {
        precondition(nghttp2_session_consume(session, streamID, count) == 0)
    }

    /// Everything the client session has to write.
    func output() -> [UInt8] {
        var bytes: [UInt8] = []
        while true {
            var chunk: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &chunk)
            precondition(count >= 0, "client mem_send: \(count)")
            guard count > 0 else { return bytes }
            bytes.append(contentsOf: UnsafeBufferPointer(start: chunk, count: count))
        }
    }

    /// Feeds server bytes; returns libnghttp2's result (negative: the client saw a fatal error).
    @discardableResult
    func receive(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) }
    }

    private func receivedField(_ streamID: Int32, _ name: String, _ value: String) {
        var response = responses[streamID, default: Response()]
        if name == ":status", let status = Int(value) {
            if status < 200 { response.informational.append(status) } else { response.status = status }
        } else {
            response.fields.append((name, value))
        }
        responses[streamID] = response
    }

    private func readUpload(
        _ streamID: Int32, _ buffer: UnsafeMutableRawBufferPointer, _ flags: UnsafeMutablePointer<UInt32>
    ) -> Int {
        var upload = uploads[streamID]!
        let count = min(buffer.count, upload.bytes.count - upload.offset)
        upload.bytes.withUnsafeBytes { source in
            buffer.copyMemory(
                from: UnsafeRawBufferPointer(rebasing: source[upload.offset..<upload.offset + count]))
        }
        upload.offset += count
        defer { uploads[streamID] = upload }
        if upload.offset == upload.bytes.count {
            if upload.ended {
                flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
            } else if count == 0 {
                upload.deferred = true
                return Int(NGHTTP2_ERR_DEFERRED.rawValue)
            }
        }
        return count
    }
}

/// Calls `body` with an nghttp2_nv list over `fields` (valid during the call only).
func withNV<R>(_ fields: [(String, String)], _ body: (UnsafeBufferPointer<nghttp2_nv>) -> R) -> R {
    var storage: [UInt8] = []
    var spans: [(Int, Int, Int, Int)] = []
    for (name, value) in fields {
        let start = storage.count
        storage += Array(name.utf8) + Array(value.utf8)
        spans.append((start, name.utf8.count, start + name.utf8.count, value.utf8.count))
    }
    storage.append(0)
    return storage.withUnsafeMutableBufferPointer { bytes in
        let list = spans.map {
            nghttp2_nv(
                name: bytes.baseAddress! + $0.0, value: bytes.baseAddress! + $0.2, namelen: $0.1,
                valuelen: $0.3,
                flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue))
        }
        return list.withUnsafeBufferPointer(body)
    }
}
