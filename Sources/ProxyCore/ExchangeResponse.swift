import HTTP1
import HTTPCore

/// The response part of an exchange: the upstream's head read, then its body relayed to the
/// client, framed as the client's transport wants it. `Exchange` composes it and decides what
/// the response's end means for the connection and the upstream.
struct ExchangeResponse {
    /// Where the response stands.
    enum Phase {
        case awaitingHead(ResponseHeadReader)
        /// The head went to the client; the body is relayed (`framing` as the client gets it).
        case body(keepAlive: Bool, decoder: BodyDecoder, framing: ClientFraming)
        case done
    }

    /// How the response body reaches the client.
    enum ClientFraming: Equatable {
        /// As the upstream's body is de-framed (a length, or HTTP/2 DATA ended by
        /// `endClientStream`).
        case plain
        /// HTTP/1.1: re-framed as chunks (the upstream's were chunked or ended at close).
        case chunked
        /// HTTP/2: there is none: the response head ended the stream.
        case endedWithHead
    }

    /// What one step of relaying the body found.
    enum Step {
        /// Bytes moved (`payload` of the body's bytes, maybe none); more may come.
        case relayed(payload: Int64)
        /// The body is complete (`payload` of its bytes in this step); the upstream connection
        /// may carry another request when `keepAlive`.
        case complete(payload: Int64, keepAlive: Bool)
        /// The upstream's body is malformed.
        case failed(ProxyError)
    }

    var phase = Phase.awaitingHead(ResponseHeadReader(limit: 64 * 1024))

    /// Whether the response has begun (after which an error can only cut it off).
    var hasBegun: Bool {
        if case .awaitingHead = phase { return false }
        return true
    }

    /// The final response head and its body's framing, once complete (1xx heads skipped);
    /// `nil` while it is incomplete.
    mutating func takeHead(
        _ input: some ByteSource, requestMethod: String, reusing spare: inout HeaderFields
    ) throws(ProxyError) -> (ResponseHead, BodyFraming)? {
        guard case .awaitingHead(var reader) = phase else { return nil }
        do throws(HTTP1Error) {
            guard let answer = try reader.read(from: input, requestMethod: requestMethod, reusing: &spare)
            else {
                phase = .awaitingHead(reader)
                return nil
            }
            return answer
        } catch {
            throw ProxyError(
                .upstreamBroken, detail: "upstream sent a malformed response: \(error.reason.rawValue)")
        }
    }

    /// Queues the client's version of `upstreamHead` (HTTP/2 HEADERS, or an HTTP/1.1 head that
    /// keeps the connection when `keepClient`); the body follows. Returns the bytes queued for
    /// the client.
    mutating func start(
        _ upstreamHead: consuming ResponseHead, _ framing: BodyFraming, request: RequestHead, http2: Bool,
        keepClient: Bool, date: [UInt8], actions: inout ActionBuffer
    ) -> Int64 {
        var clientFraming = ClientFraming.plain
        var queued: Int64 = 0
        let upstreamKeepAlive = upstreamHead.keepAlive
        if http2 {
            // HEADERS; the body follows de-framed (never chunked), trailers dropped.
            let streamHead = ClientResponseHead.stream(upstreamHead, framing: framing, date: date)
            if streamHead.endsStream { clientFraming = .endedWithHead }
            actions.append(.respondClient(streamHead))
        } else {
            let chunkToClient = (framing == .chunked || framing == .untilClose) && request.version == .http11
            if chunkToClient { clientFraming = .chunked }
            let clientHead = ClientResponseHead.make(
                consume upstreamHead, framing: framing, chunked: chunkToClient, keepAlive: keepClient,
                date: date)
            queued = Int64(actions.sendClient { clientHead.serialize(into: &$0) })
            actions.keepSpare(.response, clientHead.headers)
        }
        phase = .body(
            keepAlive: upstreamKeepAlive, decoder: BodyDecoder(framing), framing: clientFraming)
        return queued
    }

    /// One step of the body: a zero-copy move under a Content-Length, else de-framed (and
    /// re-chunked for the client) through the action buffer. `available` is what the input
    /// holds once queued moves ran.
    mutating func relay(_ input: some ByteSource, _ available: inout Int, _ actions: inout ActionBuffer)
        -> Step
    {
        guard case .body(let keepAlive, var decoder, let framing) = phase else { return .relayed(payload: 0) }
        let before = decoder.payloadBytes
        guard Self.forward(input, &available, &decoder, chunked: framing == .chunked, &actions) else {
            return .failed(ProxyError(.upstreamBroken, detail: "upstream sent a malformed body"))
        }
        phase = .body(keepAlive: keepAlive, decoder: decoder, framing: framing)
        let payload = decoder.payloadBytes - before
        return decoder.isComplete
            ? .complete(payload: payload, keepAlive: keepAlive) : .relayed(payload: payload)
    }

    /// Ends the client's copy of the body (the last chunk, or HTTP/2's END_STREAM unless the
    /// head ended the stream). Returns the bytes queued for the client.
    mutating func end(http2: Bool, actions: inout ActionBuffer) -> Int64 {
        var queued: Int64 = 0
        if case .body(_, _, let framing) = phase {
            if framing == .chunked {
                queued = Int64(actions.sendClient { ChunkedEncoder.writeEnd(into: &$0) })
            }
            if http2, framing != .endedWithHead { actions.append(.endClientStream) }
        }
        phase = .done
        return queued
    }

    /// Whether the body ends when the upstream closes.
    var endsAtClose: Bool {
        if case .body(_, let decoder, _) = phase { return decoder.endsAtClose }
        return false
    }

    /// One step of a response body: a zero-copy move under a Content-Length, else de-framed
    /// (and re-chunked for the client when `chunked`) through the action buffer. `available`
    /// is what the input holds once queued moves ran. Returns `false` for a malformed body.
    static func forward(
        _ input: some ByteSource, _ available: inout Int, _ decoder: inout BodyDecoder, chunked: Bool,
        _ actions: inout ActionBuffer
    ) -> Bool {
        if let remaining = decoder.remainingLength {
            let count = Int(min(Int64(available), remaining))
            if count > 0 { actions.append(.moveResponseBody(count)) }
            decoder.skip(count)
            available -= count
            return true
        }
        var failure: HTTP1Error?
        actions.sendClient { out in
            do throws(HTTP1Error) {
                _ = try input.decodeBody(&decoder) { bytes in
                    if chunked {
                        ChunkedEncoder.writeChunk(bytes, into: &out)
                    } else {
                        out.write(bytes)
                    }
                }
            } catch {
                failure = error
            }
        }
        available = input.count
        return failure == nil
    }
}
