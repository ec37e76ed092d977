import Config
import EventLoop
import HTTP1
import HTTPCore
import HTTPIO
import MultipartEncoding
import MultipartParsing
import ProxyCore
import UploadRules

extension ClientConnection {
    /// Routes a parsed request, decides both framings, and starts forwarding it.
    func startExchange(_ head: RequestHead) {
        let framing: BodyFraming
        do throws(HTTP1Error) {
            framing = try MessageFraming.request(head)
        } catch {
            return fail(ProxyError(error))
        }
        let route = config.routes.match(path: head.routingPath, host: head.headers.first("Host") ?? [])
        let requestID =
            head.headers["X-Request-Id"].flatMap { $0.isEmpty || $0.count > 200 ? nil : $0 }
            ?? worker.newRequestID()
        let target = route?.upstream ?? config.upstream
        var body = Exchange.RequestBody.passthrough
        var upstreamFraming = framing
        var multipartType: MediaType?
        var malformedType = false
        if let route, route.rewritesMultipart, let value = head.headers.first("Content-Type") {
            if let type = try? MediaType.parse(value, accepting: .commaSeparatedParameters),
                head.headers.count(of: "Content-Type") == 1
            {
                if type.isMultipartFormData { multipartType = type }
            } else {
                // A Content-Type that cannot be read (or comes twice) could hide a multipart
                // body from the rules while the upstream parses it: refuse it.
                malformedType = true
            }
        }
        let exchange = Exchange(
            head: head, route: route, target: target, requestID: requestID,
            startedAt: worker.base.nowMilliseconds,
            framing: framing, body: body, upstreamFraming: upstreamFraming)
        self.exchange = exchange
        worker.exchangeStarted()
        if malformedType {
            return fail(ProxyError(.badRequest, detail: "malformed or repeated Content-Type"))
        }
        if let route, !route.methods.isEmpty, !route.methods.contains(head.method) {
            return fail(
                ProxyError(
                    .methodNotAllowed, detail: "method \(head.method) not allowed on route \(route.name)"))
        }
        if case .length(let length) = framing, length > config.limits.bodyBytes {
            return fail(
                ProxyError(
                    .payloadTooLarge, detail: "body larger than limits.body_bytes", limit: "body_bytes"))
        }
        let buffering = route?.requestBody == .buffer
        if let multipartType {
            let boundary: [UInt8]
            do throws(HTTPCoreError) {
                boundary = try multipartType.multipartBoundary()
            } catch {
                return fail(ProxyError(.badRequest, detail: "multipart boundary is missing or invalid"))
            }
            let parser: MultipartParser
            do throws(MultipartError) {
                parser = try MultipartParser(
                    boundary: boundary, limits: config.limits.multipart,
                    policy: route?.rules.policy ?? MultipartPolicy(),
                    requestAnomalies: MultipartAnomalies(requestContentType: multipartType))
            } catch {
                return fail(ProxyError(error))
            }
            upstreamFraming = .chunked
            body = .multipart(
                MultipartPipeline(
                    parser: parser,
                    rewriter: RulePipeline(
                        rules: route?.rules ?? RuleSet(), sink: BodySink(.plain(exchange.staging.buffer)),
                        headers: head.headers, now: worker.unixTime, sniffer: worker.sniffer)))
        }
        if buffering, upstreamFraming == .chunked {
            do throws(ProxyError) {
                exchange.spool = try Spool(directory: config.tempDirectory)
                if case .multipart(let pipeline) = body, pipeline.rewriter.splitsFiles {
                    // order: fields_first — file parts wait in a second spool.
                    let files = try Spool(directory: config.tempDirectory)
                    exchange.fileSpool = files
                    pipeline.rewriter.deferred = BodySink(.spool(files))
                }
            } catch {
                return fail(error)
            }
        }
        exchange.body = body
        exchange.upstreamFraming = upstreamFraming
        if head.expectsContinue, framing != .none, head.version == .http11 {
            // Never to HTTP/1.0 (RFC 9110 §15.2: no 1xx to a 1.0 client; §10.1.1: ignore it).
            socket.output.add("HTTP/1.1 100 Continue\r\n\r\n")
        }
        if exchange.clientBodyRead {
            // No body: finish the (empty) multipart body, if any, and connect.
            return finishRequestBody()
        }
        // Read what the client has already sent before connecting: a body that is malformed
        // from its first bytes is refused without the upstream seeing anything.
        pumpRequestBody()
    }

    /// Takes a pooled connection or opens one; the head is sent once it is connected.
    func connectUpstream() {
        guard let exchange else { return }
        do throws(ProxyError) {
            let upstream = try worker.pool.acquire(
                exchange.target, owner: self, connectTimeout: config.timeouts.upstreamConnect)
            exchange.upstream = upstream
            exchange.upstreamStartedAt = worker.base.nowMilliseconds
            upstream.socket.setWatermarks(readHigh: Self.highWater, writeLow: 0)
            if upstream.isConnected { upstreamConnected(upstream) }
        } catch {
            fail(error)
        }
    }

    // The names and fixed values FormGate writes into upstream heads, as bytes once.
    static let contentTypeName = Array("Content-Type".utf8)
    static let multipartPrefix = Array("multipart/form-data; boundary=".utf8)
    static let forwardedForName = Array("X-Forwarded-For".utf8)
    static let forwardedProtoName = Array("X-Forwarded-Proto".utf8)
    static let forwardedHostName = Array("X-Forwarded-Host".utf8)
    static let requestIDName = Array("X-Request-Id".utf8)
    static let http = Array("http".utf8)

    /// Request fields FormGate sets itself (or drops: Expect is answered here).
    static let replacedRequestFields = ["Content-Length", "Expect", "Host", "X-Forwarded-Host"].map {
        Array($0.utf8)
    }

    /// The request head as the upstream gets it: hop-by-hop fields and the client's framing
    /// removed, forwarding fields added, framing set by the proxy.
    func upstreamHead(_ exchange: Exchange, contentLength: Int64?) -> [UInt8] {
        var headers = exchange.head.headers
        let originalHost = headers.first("Host")
        headers.removeHopByHop()
        headers.removeAll { field in
            Self.replacedRequestFields.contains { asciiCaseInsensitiveEquals(field.name, $0) }
        }
        if case .multipart(let pipeline) = exchange.body {
            let boundary = pipeline.rewriter.encoder.boundary.bytes
            var value: [UInt8] = []
            value.reserveCapacity(Self.multipartPrefix.count + boundary.count)
            value.append(contentsOf: Self.multipartPrefix)
            value.append(contentsOf: boundary)
            headers.set(HeaderFields.Field(name: Self.contentTypeName, value: value))
        }
        var forwarded: [UInt8] = []
        let earlier = headers.first("X-Forwarded-For")
        forwarded.reserveCapacity((earlier?.count ?? 0) + 2 + 39)
        if let earlier {
            forwarded.append(contentsOf: earlier)
            forwarded.append(contentsOf: [UInt8(ascii: ","), 0x20])
        }
        forwarded.append(contentsOf: peerHost.utf8)
        headers.set(HeaderFields.Field(name: Self.forwardedForName, value: forwarded))
        headers.set(HeaderFields.Field(name: Self.forwardedProtoName, value: Self.http))
        if let originalHost {
            headers.append(HeaderFields.Field(name: Self.forwardedHostName, value: originalHost))
        }
        headers.set(HeaderFields.Field(name: Self.requestIDName, value: Array(exchange.requestID.utf8)))
        if let route = exchange.route {
            for name in route.removeHeaders { headers.removeAll(named: name) }
            for (name, value) in route.setHeaders { headers.set(name: name, value: value) }
        }
        switch exchange.upstreamFraming {
        case .chunked where contentLength == nil:
            headers.append(name: "Transfer-Encoding", value: "chunked")
        case .length(let length):
            headers.append(name: "Content-Length", value: "\(length)")
        default:
            if let contentLength {
                headers.append(name: "Content-Length", value: "\(contentLength)")
            } else if exchange.head.headers.contains("Content-Length") {
                headers.append(name: "Content-Length", value: "0")
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(
            exchange.head.target.utf8.count
                + headers.fields.reduce(128) { $0 + $1.name.count + $1.value.count + 4 })
        out.append(contentsOf: exchange.head.method.utf8)
        out.append(0x20)
        out.append(contentsOf: exchange.head.target.utf8)
        out.append(contentsOf: " HTTP/1.1\r\nHost: ".utf8)
        out.append(contentsOf: exchange.target.authority.utf8)
        out.append(contentsOf: [0x0D, 0x0A])
        headers.appendSerialized(to: &out)
        return out
    }

    /// Where request body bytes go next: the spool, the upstream's output once the head is
    /// there, or the staging buffer while the upstream is not connected yet. Staged bytes are
    /// unframed: the head decides (an exact Content-Length when the whole body is staged,
    /// else one chunk for what is staged).
    func bodyTarget(_ exchange: Exchange) -> BodySink.Target {
        if let spool = exchange.spool { return .spool(spool) }
        guard exchange.upstreamHeadSent else { return .plain(exchange.staging.buffer) }
        let output = exchange.upstream!.socket.output
        return exchange.upstreamFraming == .chunked ? .chunked(output) : .plain(output)
    }

    /// Moves request body bytes from the client towards the upstream until the client has
    /// nothing more, or the upstream side is full (then reading pauses: backpressure). The
    /// upstream connection is opened after the first bytes were read and found well-formed.
    func pumpRequestBody() {
        guard let exchange, !closing, !exchange.clientBodyRead else { return }
        let input = socket.input
        var blocked = false
        while input.count > 0 {
            let target = bodyTarget(exchange)
            let output: EvBuffer?
            switch target {
            case .chunked(let buffer), .plain(let buffer): output = buffer
            case .spool: output = nil
            }
            if let output, output.count > Self.highWater {
                socket.setReading(false)
                blocked = true
                break
            }
            let before = exchange.decoder.payloadBytes
            var failure: ProxyError?
            switch exchange.body {
            case .passthrough:
                if let remaining = exchange.decoder.remainingLength, case .plain(let output) = target {
                    let count = Int(min(Int64(input.count), remaining))
                    input.move(count, to: output)
                    exchange.decoder.skip(count)
                } else {
                    var sink = BodySink(target)
                    do throws(HTTP1Error) {
                        _ = try input.decodeBody(&exchange.decoder) { sink.write($0) }
                    } catch {
                        failure = ProxyError(error)
                    }
                }
            case .multipart(let pipeline):
                pipeline.rewriter.sink = BodySink(target)
                var multipartFailure: ProxyError?
                do throws(HTTP1Error) {
                    _ = try input.decodeBody(&exchange.decoder) { bytes in
                        guard multipartFailure == nil else { return }
                        do throws(ProxyError) {
                            try pipeline.feed(bytes)
                        } catch {
                            multipartFailure = error
                        }
                    }
                } catch {
                    failure = ProxyError(error)
                }
                if let multipartFailure { failure = multipartFailure }
            }
            if let failure { return fail(failure) }
            exchange.bytesIn += exchange.decoder.payloadBytes - before
            if let spool = exchange.spool, spool.error != 0 {
                return fail(ProxyError(.insufficientStorage, detail: "cannot spool the request body to disk"))
            }
            if exchange.decoder.payloadBytes > config.limits.bodyBytes {
                return fail(
                    ProxyError(
                        .payloadTooLarge, detail: "body larger than limits.body_bytes", limit: "body_bytes"))
            }
            if exchange.decoder.isComplete { return finishRequestBody() }
            if exchange.decoder.payloadBytes == before { break }
        }
        if clientHalfClosed, !blocked {
            // A FIN before the body was whole: nothing more will come.
            return clientGone()
        }
        if exchange.upstream == nil, exchange.spool == nil {
            connectUpstream()
        } else if input.count == 0 || exchange.spool != nil {
            resumeReading()
        }
    }

    /// The client's body is complete: close the multipart body and the framing; then the
    /// request goes (or has gone) upstream.
    func finishRequestBody() {
        guard let exchange else { return }
        exchange.clientBodyRead = true
        // Reading stays on (no epoll_ctl pair per request): what arrives now is a pipelined
        // request or a FIN, kept in the input (bounded by the watermark) until the answer.
        if case .multipart(let pipeline) = exchange.body {
            pipeline.rewriter.sink = BodySink(bodyTarget(exchange))
            do throws(ProxyError) {
                try pipeline.finish()
            } catch {
                return fail(error)
            }
        }
        if let spool = exchange.spool {
            guard spool.flush(), exchange.fileSpool?.flush() ?? true else {
                return fail(ProxyError(.insufficientStorage, detail: "cannot spool the request body to disk"))
            }
            return connectUpstream()
        }
        if exchange.upstreamFraming == .chunked, exchange.upstreamHeadSent, let upstream = exchange.upstream {
            upstream.socket.output.add("0\r\n\r\n")
        }
        if exchange.upstreamHeadSent {
            requestFullySent()
        } else if exchange.upstream == nil {
            connectUpstream()
        }
    }

    /// The whole request is queued upstream: now the response clock runs.
    func requestFullySent() {
        guard let exchange, let upstream = exchange.upstream else { return }
        exchange.requestSent = true
        upstream.socket.setTimeouts(
            readMilliseconds: config.timeouts.upstreamResponse,
            writeMilliseconds: config.timeouts.upstreamResponse)
    }
}
