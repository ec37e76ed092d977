public import HTTP1
public import UploadRules

extension Exchange {
    /// Who sent the request, once a check established it.
    public var identity: Identity? { checks.identity }

    /// Runs the route's checks from `first` (`ExchangeChecks`). Returns whether they all
    /// admitted the request (`false`: it is held, or it was refused).
    mutating func runChecks(from first: Int, date: [UInt8], now: Int64, actions: inout ActionBuffer) -> Bool {
        let asked = CheckRequest(
            head: head, route: route?.name ?? "", client: clientAddress, identity: nil, secure: secure,
            now: now)
        switch checks.run(
            from: first, route: route, request: asked, declaredBytes: request.declaredBytes, now: now,
            record: &record)
        {
        case .admitted:
            return true
        case .refused(let refusal):
            refused(refusal, date: date, now: now, actions: &actions)
            return false
        case .held(let index, let consultation, let milliseconds):
            request.phase = .held
            if trace != nil { trace!.consulting(consultation.service, key: index, now: now) }
            timers.start(.verdict(index), at: now + milliseconds, &actions)
            actions.append(.consultCheck(index, consultation))
            return false
        }
    }

    /// The verdict for hold `id` (a check's index) arrived.
    public mutating func verdict(
        _ id: Int, _ verdict: Verdict, input: some ByteSource, sink: Sink, levels: BufferLevels,
        tools: RuleTools, date: [UInt8], now: Int64, actions: inout ActionBuffer
    ) {
        guard outcome == nil, checks.held == id else { return }
        checks.held = nil
        timers.cancel(.verdict(id), &actions)
        if trace != nil { trace!.consulted(nil, key: id, outcome: verdict.outcome, now: now) }
        checks.sharedVerdict(verdict, index: id, route: route)
        switch verdict {
        case .release, .decideLocally:
            if case .release(let identity, let tally) = verdict {
                if let tally { record.tallies.append(tally) }
                if let identity { checks.established(identity, tallied: tally != nil, record: &record) }
            }
            guard runChecks(from: id + 1, date: date, now: now, actions: &actions) else {
                return holdInput(input, &actions)
            }
            proceed(
                input: input, sink: sink, levels: levels, tools: tools, date: date, now: now,
                actions: &actions)
        case .refuse(let refusal):
            refused(refusal, date: date, now: now, actions: &actions)
        case .abort:
            client.closeNowReset = .cancel
            endUnanswered(
                .closeNow, status: 444, error: "aborted by a request check", now: now, actions: &actions)
        }
    }

    /// A check refused the request: its answer, fields and body go to the client.
    mutating func refused(_ refusal: Refusal, date: [UInt8], now: Int64, actions: inout ActionBuffer) {
        if let tally = refusal.tally { record.tallies.append(tally) }
        fail(ProxyError(refusal), date: date, now: now, actions: &actions)
    }
}
