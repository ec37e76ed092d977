import CLibevent
import Config
import EventLoop
import HTTP1
import HTTPCore
import HTTPIO

#if canImport(Glibc)
    import Glibc
#endif

extension ClientConnection: UpstreamOwner {
    func upstreamConnected(_ upstream: UpstreamConnection) {
        guard let exchange, exchange.upstream === upstream else { return }
        let output = upstream.socket.output
        if let spool = exchange.spool {
            // The body is the spool, then (order: fields_first) the file spool, less the
            // encoder's leading CRLF in that case.
            let spools = [spool] + (exchange.fileSpool.map { [$0] } ?? [])
            var skip: Int64 = exchange.fileSpool == nil ? 0 : 2
            let total = spools.reduce(0) { $0 + $1.size } - skip
            output.add(upstreamHead(exchange, contentLength: total))
            for part in spools {
                let fd = part.takeDescriptor()
                let offset = min(skip, part.size)
                skip -= offset
                guard part.size - offset > 0 else {
                    _ = Glibc.close(fd)
                    continue
                }
                guard evbuffer_add_file(output.raw, fd, offset, part.size - offset) == 0 else {
                    return fail(ProxyError(.spoolFailed, detail: "cannot send the spooled body"))
                }
            }
            exchange.spool = nil
            exchange.fileSpool = nil
            exchange.upstreamHeadSent = true
            return requestFullySent()
        }
        let staged = exchange.staging.buffer
        if exchange.upstreamFraming == .chunked, exchange.clientBodyRead {
            // The whole body was read before the head goes out (small uploads): an exact
            // Content-Length instead of chunks, which legacy upstreams read more readily.
            output.add(upstreamHead(exchange, contentLength: Int64(staged.count)))
            staged.moveAll(to: output)
        } else if exchange.upstreamFraming == .chunked {
            output.add(upstreamHead(exchange, contentLength: nil))
            if staged.count > 0 {
                output.add(ChunkedEncoder.chunkHeader(staged.count))
                staged.moveAll(to: output)
                output.add("\r\n")
            }
        } else {
            output.add(upstreamHead(exchange, contentLength: nil))
            staged.moveAll(to: output)
        }
        exchange.upstreamHeadSent = true
        if exchange.clientBodyRead {
            requestFullySent()
        } else {
            resumeReading()
            pumpRequestBody()
        }
    }

    func upstreamWritable(_ upstream: UpstreamConnection) {
        guard let exchange, exchange.upstream === upstream, !exchange.clientBodyRead else { return }
        resumeReading()
        pumpRequestBody()
    }

    func upstreamReadable(_ upstream: UpstreamConnection) {
        guard let exchange, exchange.upstream === upstream else { return }
        relayResponse(exchange, upstream)
    }

    func upstream(_ upstream: UpstreamConnection, failed events: SocketEvents) {
        guard let exchange, exchange.upstream === upstream else {
            worker.pool.discard(upstream)
            return
        }
        if events.contains(.endOfFile), case .body(_, let decoder, _) = exchange.response, decoder.endsAtClose
        {
            relayResponse(exchange, upstream)
            return completeResponse(exchange, reusable: false)
        }
        let timedOut = events.contains(.timeout)
        if !upstream.isConnected {
            let detail =
                timedOut
                ? "upstream connect timed out"
                : "upstream unreachable" + (upstream.socket.tlsError.map { " (TLS: \($0))" } ?? "")
            return fail(ProxyError(timedOut ? .upstreamTimeout : .upstreamUnreachable, detail: detail))
        }
        if timedOut {
            return fail(ProxyError(.upstreamTimeout, detail: "upstream did not answer in time"))
        }
        fail(
            ProxyError(
                .upstreamBroken,
                detail: "upstream closed the connection"
                    + (upstream.socket.tlsError.map { " (TLS: \($0))" } ?? "")))
    }

    /// Reads the response head, then streams the body to the client (pausing the upstream
    /// when the client does not drain).
    func relayResponse(_ exchange: Exchange, _ upstream: UpstreamConnection) {
        let input = upstream.socket.input
        let output = socket.output
        while true {
            switch exchange.response {
            case .done:
                return
            case .awaitingHead(var scanner):
                let bytes: [UInt8]
                do throws(HTTP1Error) {
                    guard let head = try input.takeHead(&scanner) else {
                        exchange.response = .awaitingHead(scanner)
                        return
                    }
                    bytes = head
                } catch {
                    return fail(
                        ProxyError(.upstreamBroken, detail: "upstream sent a malformed response head"))
                }
                let head: ResponseHead
                let framing: BodyFraming
                do throws(HTTP1Error) {
                    head = try HeadParser.parseResponse(bytes)
                    framing = try MessageFraming.response(head, requestMethod: exchange.head.method)
                } catch {
                    return fail(
                        ProxyError(
                            .upstreamBroken,
                            detail: "upstream sent a malformed response: \(error.reason.rawValue)"))
                }
                if (100..<200).contains(head.status) {
                    if head.status == 101 {
                        return fail(ProxyError(.upstreamBroken, detail: "upstream switched protocols"))
                    }
                    exchange.response = .awaitingHead(HeadScanner(limit: 64 * 1024))
                    continue
                }
                exchange.upstreamStatus = head.status
                exchange.upstreamMilliseconds = worker.base.nowMilliseconds - exchange.upstreamStartedAt
                let keepClient =
                    exchange.head.keepAlive && exchange.clientBodyRead && !clientHalfClosed
                    && !worker.draining
                let chunkToClient =
                    (framing == .chunked || framing == .untilClose) && exchange.head.version == .http11
                let headBytes = clientResponseHead(
                    head, framing: framing, chunked: chunkToClient, keepAlive: keepClient)
                output.add(headBytes)
                exchange.bytesOut += Int64(headBytes.count)
                exchange.responseStarted = true
                if !exchange.clientBodyRead {
                    // An early answer: the rest of the request body will not be forwarded.
                    exchange.clientBodyRead = true
                    socket.setReading(false)
                }
                exchange.response = .body(head, BodyDecoder(framing), clientChunked: chunkToClient)
            case .body(let head, var decoder, let clientChunked):
                if output.count > Self.highWater {
                    upstream.socket.setReading(false)
                    return
                }
                let before = decoder.payloadBytes
                if let remaining = decoder.remainingLength {
                    let count = Int(min(Int64(input.count), remaining))
                    input.move(count, to: output)
                    decoder.skip(count)
                } else {
                    var sink = clientChunked ? BodySink(.chunked(output)) : BodySink(.plain(output))
                    do throws(HTTP1Error) {
                        _ = try input.decodeBody(&decoder) { sink.write($0) }
                    } catch {
                        return fail(ProxyError(.upstreamBroken, detail: "upstream sent a malformed body"))
                    }
                }
                exchange.bytesOut += decoder.payloadBytes - before
                exchange.response = .body(head, decoder, clientChunked: clientChunked)
                if decoder.isComplete {
                    return completeResponse(exchange, reusable: head.keepAlive && input.count == 0)
                }
                if decoder.payloadBytes == before { return }
            }
        }
    }

    /// The client drained: resume reading the upstream response.
    func resumeResponse() {
        guard let exchange, let upstream = exchange.upstream, case .body = exchange.response else { return }
        upstream.socket.setReading(true)
        relayResponse(exchange, upstream)
    }

    /// The response head the client gets: hop-by-hop fields removed, framing re-done, a `Date`
    /// added when the upstream sent none.
    func clientResponseHead(_ head: ResponseHead, framing: BodyFraming, chunked: Bool, keepAlive: Bool)
        -> [UInt8]
    {
        var headers = head.headers
        headers.removeHopByHop()
        switch framing {
        case .length(let length):
            headers.set(name: "Content-Length", value: "\(length)")
        case .chunked, .untilClose:
            headers.removeAll(named: "Content-Length")
            if chunked { headers.append(name: "Transfer-Encoding", value: "chunked") }
        case .none:
            break
        }
        if !keepAlive || (framing == .untilClose && !chunked) {
            headers.append(name: "Connection", value: "close")
        }
        if !headers.contains("Date") {
            headers.append(HeaderFields.Field(name: Self.dateName, value: responseDate()))
        }
        var out: [UInt8] = []
        out.reserveCapacity(
            head.reason.count + headers.fields.reduce(32) { $0 + $1.name.count + $1.value.count + 4 })
        out.append(contentsOf: "HTTP/1.1 ".utf8)
        if (100...999).contains(head.status) {  // as parsed: three digits
            out.append(contentsOf: [
                UInt8(48 + head.status / 100), UInt8(48 + head.status / 10 % 10),
                UInt8(48 + head.status % 10), 0x20,
            ])
        } else {
            out.append(contentsOf: "\(head.status) ".utf8)
        }
        out.append(contentsOf: head.reason)
        out.append(contentsOf: [0x0D, 0x0A])
        headers.appendSerialized(to: &out)
        return out
    }

    /// The response is complete: log, recycle or drop the upstream, then serve the next
    /// request or close.
    func completeResponse(_ exchange: Exchange, reusable: Bool) {
        if case .body(_, _, let clientChunked) = exchange.response, clientChunked {
            socket.output.add("0\r\n\r\n")
            exchange.bytesOut += 5
        }
        exchange.response = .done
        if let upstream = exchange.upstream {
            exchange.upstream = nil
            upstream.requestsServed += 1
            if reusable && exchange.requestSent && exchange.decoder.isComplete {
                worker.pool.release(upstream)
            } else {
                worker.pool.discard(upstream)
            }
        }
        worker.log(exchange, status: exchange.upstreamStatus ?? 502, client: peer)
        let keepAlive =
            exchange.head.keepAlive && exchange.decoder.isComplete && !clientHalfClosed
            && exchange.requestSent && !worker.draining
        self.exchange = nil
        // An early answer leaves the client still sending its body: linger.
        guard keepAlive else { return flushAndClose(linger: !exchange.decoder.isComplete) }
        resumeReading()
        readRequests()
    }
}
