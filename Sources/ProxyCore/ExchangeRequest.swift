import HTTP1
import HTTPCore
import MultipartParsing
import UploadRules

/// The request part of an exchange: where the client's body stands, how it is de-framed,
/// re-encoded by the rules and framed upstream, and where a rewritten body waits. `Exchange`
/// composes it with its upstream and response parts and decides what happens next; this part
/// moves bytes and reports what it found.
struct ExchangeRequest<Sink: RequestBodySink> {
    /// Where the request stands.
    enum Phase: Equatable {
        /// Request-level verdicts are pending: body bytes stay in the client's input.
        case held
        /// Body bytes are read and forwarded.
        case reading
        /// The whole body was read; its end is not in the sinks yet.
        case ending(BodyEnd)
        /// The whole body was read and is in the sinks (or it was abandoned after an early
        /// answer).
        case done

        /// Whether the client's body has been read to its end (or abandoned).
        var bodyRead: Bool {
            switch self {
            case .held, .reading: false
            case .ending, .done: true
            }
        }
    }

    /// What the end of a body that was read whole waits for.
    enum BodyEnd: Equatable {
        /// The rules hold part of their output (a digest computed off the loop, a file's
        /// verdict): the body is whole in the sinks once they release it.
        case rules
        /// The spooled body is written, but some writes are still in flight off the loop: the
        /// upstream connect waits for the shell's progress signal.
        case spoolWrites
    }

    /// Where a rewritten body waits before it goes upstream.
    enum Store: Equatable {
        /// Nowhere: it streams (chunked, or under a declared length).
        case none
        /// The spool (and file spool) of `request_body: buffer`, then sent with a length.
        case spool
    }

    var phase = Phase.reading
    /// The request body, de-framed.
    var decoder: BodyDecoder
    /// How the body is framed upstream.
    var upstreamFraming: BodyFraming
    var multipart: MultipartBody<Sink>?
    /// The buffers of the connection's previous multipart body, which a multipart body here
    /// reuses; given by the connection before `setUp`.
    var spareBuffers: MultipartBody<Sink>.Buffers?
    /// The re-encoded body's boundary, kept apart from `multipart`: reading it through
    /// `multipart?.` copied the whole body (parser and rules) when the head was sent.
    var boundary: [UInt8]?
    /// Where the rewritten body waits before it goes upstream (`request_body:`).
    var store = Store.none
    /// A `stream` body whose length is declared upstream once the file's head is re-encoded,
    /// until it is (see `ExchangeRequest+DeclaredLength`).
    var pendingLength: PendingLength?
    /// The multipart type of a body the route rewrites (read from the head).
    var bodyType: MediaType?

    /// A request whose body the client frames as `framing`.
    init(framing: BodyFraming) {
        decoder = BodyDecoder(framing)
        // A body that ends with its stream has no length to declare: chunks, or the spool.
        upstreamFraming = framing == .untilEndOfStream ? .chunked : framing
    }

    /// Whether the whole body is in the sinks (read, and nothing held by the rules; spool
    /// writes may still be landing).
    var inSinks: Bool { phase == .done || phase == .ending(.spoolWrites) }

    /// The body's length when the client declared it (for the rate limiter's byte budget).
    var declaredBytes: Int64? {
        switch upstreamFraming {
        case .length(let length): length
        case .none: 0
        default: nil
        }
    }

    /// Whether the rewritten body is spooled (`request_body: buffer`, or a store that needs a
    /// length the stream cannot declare in time).
    var spooled: Bool { store == .spool }

    /// Whether the rules want the client paused: the hashing queue is backed up.
    var rulesWantPause: Bool { multipart?.rewriter.wantsPause ?? false }

    /// Bytes the rules hold behind a pending digest or verdict.
    var heldBytes: Int { multipart?.rewriter.heldBytes ?? 0 }

    /// The multipart pipeline, when the body is rewritten, and where the body waits.
    mutating func setUp(
        route: Route?, head: RequestHead, limits: Limits, identity: Identity?, sink: Sink, tools: RuleTools,
        now: Int64
    ) -> ProxyError? {
        if let bodyType {
            do throws(ProxyError) {
                multipart = try MultipartBody(
                    bodyType, route: route, head: head, limits: limits, identity: identity, sink: sink,
                    tools: tools, now: now, buffers: spareBuffers.take())
            } catch {
                return error
            }
            boundary = multipart!.rewriter.encoder.boundary.bytes
            prepareDeclaredLength(route: route)
            upstreamFraming = .chunked
        }
        // A store that needs a length never gets chunks: a stream body whose length cannot be
        // declared when its file begins (sent chunked, or fields follow the file) is spooled.
        let spoolsForLength =
            route?.requestBody == .stream && route?.rules.needsContentLength == true && pendingLength == nil
        let spools = (route?.requestBody == .buffer || spoolsForLength) && upstreamFraming == .chunked
        store = spools ? .spool : .none
        return nil
    }

    /// One step of forwarding: a zero-copy move under a Content-Length, else de-framing (and
    /// the rules) into `sink`, pointed where the bytes go. `available` is what the input holds
    /// once queued moves ran; it is updated to what the body may take next
    /// (`readable(_:awaitsEndStream:)`).
    mutating func forward(
        input: some ByteSource, available: inout Int, to sink: Sink, chunked: Bool, awaitsEndStream: Bool,
        actions: inout ActionBuffer
    ) -> ProxyError? {
        let limit = available
        if multipart == nil, let remaining = decoder.remainingLength, !chunked {
            let count = Int(min(Int64(available), remaining))
            actions.append(.moveRequestBody(count, to: sink.destination))
            decoder.skip(count)
            available -= count
            return nil
        }
        var failure: ProxyError?
        // The decoder is taken out while the rules run (they live beside it in `self`).
        var decoder = self.decoder
        do throws(HTTP1Error) {
            if multipart != nil {
                multipart!.direct(to: sink, chunked: chunked)
                // File content the rules leave alone moves from the input to the upstream
                // (`InputLoan`); `lender` shares the shell's state with the rules' sink.
                var lender = sink
                let lends = lender.openLoan(input)
                _ = try input.decodeBody(
                    &decoder, limit: limit,
                    reading: { chunk, offset in if lends { lender.lend(chunk, at: offset) } },
                    drain: { used in lends ? lender.settleLoan(used: used) : input.drain(used) },
                    { bytes in
                        guard failure == nil else { return }
                        do throws(ProxyError) {
                            try multipart!.feed(bytes)
                        } catch {
                            failure = error
                        }
                    })
            } else {
                var framed = FramedSink(sink, chunked: chunked)
                _ = try input.decodeBody(&decoder, limit: limit) { framed.write($0) }
            }
        } catch {
            failure = failure ?? ProxyError(error)
        }
        self.decoder = decoder
        available = readable(input.count, awaitsEndStream: awaitsEndStream)
        return failure
    }

    /// How many of the `count` input bytes the body may take now. On an HTTP/2 stream that has
    /// not ended (`awaitsEndStream`), a `content-length` body's final byte stays in the input
    /// until END_STREAM: the upstream never holds a whole request whose DATA may yet disagree
    /// with its length (RFC 9113 §8.1.1); one more byte, or no END_STREAM, and it is aborted
    /// incomplete.
    func readable(_ count: Int, awaitsEndStream: Bool) -> Int {
        decoder.readable(count, awaitsEndStream: awaitsEndStream)
    }

    /// Whether `count` input bytes hold more than the body has left (HTTP/2: a stream's input
    /// holds nothing but its DATA).
    func overflows(_ count: Int) -> Bool {
        guard count > 0 else { return false }
        if decoder.isComplete { return true }
        if let remaining = decoder.remainingLength { return Int64(count) > remaining }
        return false
    }

    /// Whether the body may take more than the `count` input bytes: it is not complete and its
    /// length, if any, is not covered by what was read and those bytes.
    func wantsMore(than count: Int) -> Bool {
        guard !decoder.isComplete else { return false }
        if let remaining = decoder.remainingLength { return Int64(count) < remaining }
        return true
    }

    /// A spool that failed, or a body past `limits.body_bytes`.
    func limitError(_ sink: Sink, limits: Limits) -> ProxyError? {
        if sink.spoolFailed { return Self.spoolWriteFailed }
        if decoder.payloadBytes > limits.bodyBytes {
            return ProxyError(
                .payloadTooLarge, detail: "body larger than limits.body_bytes", limit: "body_bytes")
        }
        return nil
    }

    /// A spool write failed (e.g. ENOSPC): 507.
    static var spoolWriteFailed: ProxyError {
        ProxyError(.insufficientStorage, detail: "cannot spool the request body to disk")
    }

    /// How the upstream head frames the body once the connection is ready, given what waits
    /// (`levels`): the spools' length; a body read whole before the head goes (small uploads)
    /// with its exact length rather than chunks, which legacy upstreams read more readily; else
    /// chunks, or the client's length.
    func headFraming(levels: BufferLevels) -> UpstreamRequestHead.Framing {
        if spooled { return .length(levels.spool + levels.fileSpool - spoolSkip) }
        switch upstreamFraming {
        case .chunked: return inSinks ? .length(Int64(levels.staging)) : .chunked
        case .length(let length): return .length(length)
        default: return .none
        }
    }

    /// What the upstream skips of the spools: with `order: fields_first` the body is the spool,
    /// then the file spool, less the encoder's leading CRLF.
    var spoolSkip: Int64 { multipart?.rewriter.deferred != nil ? 2 : 0 }

    /// Queues what waited for the head behind it: the spools, or the staged bytes (as a chunk
    /// when the head went with `.chunked`).
    func sendStaged(levels: BufferLevels, framing: UpstreamRequestHead.Framing, _ actions: inout ActionBuffer)
    {
        if spooled { return actions.append(.sendSpoolsUpstream(skip: spoolSkip)) }
        guard levels.staging > 0 else { return }
        guard framing == .chunked else { return actions.append(.moveStagingToUpstream) }
        actions.sendUpstream { $0.write(ChunkedEncoder.chunkHeader(levels.staging)) }
        actions.append(.moveStagingToUpstream)
        actions.sendUpstream { $0.write("\r\n") }
    }

    /// The length of a body whose head waited for it and which is now whole (in the staging
    /// buffer): the client's, or what the rules wrote.
    var wholeLength: Int64 {
        if case .length(let declared) = upstreamFraming { return declared }
        return multipart?.rewriter.writtenBytes ?? 0
    }
}

extension BodyDecoder {
    /// How many of the `count` input bytes the body may take now (see
    /// `ExchangeRequest.readable(_:awaitsEndStream:)`).
    func readable(_ count: Int, awaitsEndStream: Bool) -> Int {
        guard awaitsEndStream, let remaining = remainingLength else { return count }
        return Int(min(Int64(count), remaining - 1))
    }
}
