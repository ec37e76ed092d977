public import UploadRules

extension Exchange {
    /// Inspected files that ended (`FileInspection`): each one's verdict is asked for, with a
    /// deadline; its final byte and everything after it wait in the rules' holds meanwhile.
    mutating func consultFileInspections(now: Int64, actions: inout ActionBuffer) {
        guard multipart != nil, let inspection = route?.rules.inspection else { return }
        for request in multipart!.rewriter.takeVerdictRequests() {
            timers.start(
                .fileVerdict(request.hold.rawValue), at: now + inspection.timeoutMilliseconds, &actions)
            actions.append(.consultFile(request, inspection))
        }
    }

    /// The verdict on an inspected file arrived: a release lets its held output go (and the
    /// body complete, if it was whole); a refusal ends the exchange (422), the upstream's copy
    /// left incomplete; `nil` (the inspection could not be consulted) ends it with 503.
    public mutating func fileVerdict(
        _ hold: HoldID, _ decision: HoldDecision?, sink: Sink, levels: BufferLevels, date: [UInt8],
        now: Int64,
        actions: inout ActionBuffer
    ) {
        guard outcome == nil, multipart != nil, timers.contains(.fileVerdict(hold.rawValue)) else { return }
        timers.cancel(.fileVerdict(hold.rawValue), &actions)
        guard let decision else {
            return fail(
                ProxyError(.verdictTimeout, detail: "the file inspection cannot be consulted"), date: date,
                now: now, actions: &actions)
        }
        multipart!.direct(to: routed(sink), chunked: chunksDestination)
        multipart!.rewriter.decide(hold, decision)
        if let refusal = multipart!.rewriter.refusal {
            return fail(ProxyError(refusal), date: date, now: now, actions: &actions)
        }
        hashingProgressed(sink: sink, levels: levels, date: date, now: now, actions: &actions)
    }
}
