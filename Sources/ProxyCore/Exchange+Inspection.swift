public import UploadRules

extension Exchange {
    /// Inspected files that ended: their verdicts are asked for (`ExchangeRequest.consultInspections`).
    mutating func consultFileInspections(now: Int64, actions: inout ActionBuffer) {
        let asked = request.consultInspections(route?.rules.inspection, now: now, timers: &timers, &actions)
        guard trace != nil else { return }
        for hold in asked { trace!.consulting("clamd", key: hold.rawValue, now: now) }
    }

    /// The verdict on an inspected file arrived: a release lets its held output go (and the
    /// body complete, if it was whole); a refusal ends the exchange (422), the upstream's copy
    /// left incomplete; `nil` (the inspection could not be consulted) ends it with 503.
    public mutating func fileVerdict(
        _ hold: HoldID, _ decision: HoldDecision?, sink: Sink, levels: BufferLevels, date: [UInt8],
        now: Int64,
        actions: inout ActionBuffer
    ) {
        guard outcome == nil, request.multipart != nil, timers.contains(.fileVerdict(hold.rawValue)) else {
            return
        }
        timers.cancel(.fileVerdict(hold.rawValue), &actions)
        if trace != nil {
            let outcome = decision.map { if case .release = $0 { "release" } else { "refuse" } } ?? "error"
            trace!.consulted("clamd", key: hold.rawValue, outcome: outcome, now: now)
        }
        guard let decision else {
            return fail(
                ProxyError(.verdictTimeout, detail: "the file inspection cannot be consulted"), date: date,
                now: now, actions: &actions)
        }
        request.multipart!.direct(to: routed(sink), chunked: chunksDestination)
        request.multipart!.rewriter.decide(hold, decision)
        if let refusal = request.multipart!.rewriter.refusal {
            return fail(ProxyError(refusal), date: date, now: now, actions: &actions)
        }
        hashingProgressed(sink: sink, levels: levels, date: date, now: now, actions: &actions)
    }
}
