extension Exchange {
    /// Where the exchange stands for the live view; `nil` for a request without a body (not
    /// an upload) or once it ended.
    public var liveStatus: LiveStatus? {
        guard outcome == nil, hasBody else { return nil }
        var status = LiveStatus(
            requestID: requestID, route: route?.name, http2: clientProtocol.isHTTP2,
            startedAt: record.startedAt,
            stage: liveStage, bytesIn: record.bytesIn)
        status.bytesExpected = declaredLength
        status.identity = record.identity
        if let multipart = request.multipart, let part = multipart.rewriter.records.last {
            status.partName = part.name
            status.partFilename = part.originalFilename ?? part.filename
        }
        if let live = local?.responder.live {
            status.tusOffset = live.offset + record.bytesIn
            status.tusLength = live.length
        }
        return status
    }

    /// Whether the request has a body (an HTTP/2 stream without END_STREAM on its HEADERS, or
    /// framing other than none).
    var hasBody: Bool {
        if clientProtocol.isHTTP2 { return client.awaitsEndStream || record.bytesIn > 0 }
        if let length = declaredLength { return length > 0 }
        return head.headers["Transfer-Encoding"] != nil
    }

    /// The client's `Content-Length`.
    var declaredLength: Int64? {
        head.headers["Content-Length"].flatMap { Int64($0) }
    }

    /// The contract's stage, from the phases of the request, the upstream and the response.
    var liveStage: LiveStatus.Stage {
        switch request.phase {
        case .held:
            return .heldAuth
        case .reading:
            if let multipart = request.multipart, multipart.rewriter.isHolding {
                return multipart.rewriter.firstHoldIsVerdict ? .heldScan : .receiving
            }
            return .receiving
        case .ending(.rules):
            let verdict = request.multipart?.rewriter.firstHoldIsVerdict ?? false
            return verdict ? .heldScan : .heldDigest
        case .ending(.spoolWrites):
            return .delivering
        case .done:
            if let live = local?.responder.live { return live.delivering ? .delivering : .receiving }
            if local != nil { return .receiving }
            if response.hasBegun || upstream.phase == .sent { return .waitingUpstream }
            return .delivering
        }
    }
}
