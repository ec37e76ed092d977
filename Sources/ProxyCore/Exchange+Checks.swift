public import HTTP1
import UploadRules

extension Exchange {
    /// What the route's checks see of this request.
    func checkRequest(now: Int64) -> CheckRequest {
        CheckRequest(
            head: head, route: route?.name ?? "", client: client, identity: identity, secure: secure, now: now
        )
    }

    /// Runs the route's checks from `first`, in order, until one holds or refuses. Returns
    /// whether they all admitted the request (`false`: it is held, or it was refused).
    mutating func runChecks(from first: Int, date: [UInt8], now: Int64, actions: inout ActionBuffer) -> Bool {
        guard let checks = route?.checks, first < checks.count else { return true }
        for index in first..<checks.count {
            switch checks[index].check(checkRequest(now: now)) {
            case .pass:
                admittedChecks = index + 1
            case .identified(let identity):
                admittedChecks = index + 1
                established(identity)
            case .refuse(let refusal):
                refused(refusal, date: date, now: now, actions: &actions)
                return false
            case .hold(let milliseconds):
                heldCheck = index
                requestPhase = .held
                timers.start(.verdict(index), at: now + milliseconds, &actions)
                actions.append(.consultCheck(index))
                return false
            }
        }
        return true
    }

    /// The verdict for hold `id` (a check's index) arrived.
    public mutating func verdict(
        _ id: Int, _ verdict: Verdict, input: some ByteSource, sink: Sink, levels: BufferLevels,
        tools: RuleTools, date: [UInt8], now: Int64, actions: inout ActionBuffer
    ) {
        guard outcome == nil, heldCheck == id else { return }
        heldCheck = nil
        timers.cancel(.verdict(id), &actions)
        switch verdict {
        case .release(let identity, let tally):
            admittedChecks = id + 1
            if let tally { record.tallies.append(tally) }
            if let identity { established(identity, tallied: tally != nil) }
            guard runChecks(from: id + 1, date: date, now: now, actions: &actions) else {
                return holdInput(input, &actions)
            }
            proceed(
                input: input, sink: sink, levels: levels, tools: tools, date: date, now: now,
                actions: &actions)
        case .refuse(let refusal):
            refused(refusal, date: date, now: now, actions: &actions)
        case .abort:
            record.error = "aborted by a request check"
            endUpstream(reusable: false, &actions)
            finish(status: 444, now: now, actions: &actions)
            outcome = .closeNow
        }
    }

    /// A check authenticated the client.
    mutating func established(_ identity: Identity, tallied: Bool = false) {
        self.identity = identity
        record.identity = identity.subject
        if !tallied { record.tallies.append(.auth(.allowed, reason: identity.method.rawValue)) }
    }

    /// A check refused the request: its answer, fields and body go to the client.
    mutating func refused(_ refusal: Refusal, date: [UInt8], now: Int64, actions: inout ActionBuffer) {
        if let tally = refusal.tally { record.tallies.append(tally) }
        fail(ProxyError(refusal), date: date, now: now, actions: &actions)
    }

    /// Tells every check that admitted the request that it ended (once, from `finish`).
    mutating func endChecks(now: Int64) {
        guard admittedChecks > 0, let checks = route?.checks else { return }
        let request = checkRequest(now: now)
        for check in checks.prefix(admittedChecks) {
            check.ended(request, bytesIn: record.bytesIn, now: now)
        }
        admittedChecks = 0
    }
}
