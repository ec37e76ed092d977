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
        // Only the list is copied: `guard let route` copied the whole route per request.
        let checks = route?.checks ?? []
        for index in first..<max(first, checks.count) {
            switch checks[index].check(checkRequest(now: now)) {
            case .pass:
                continue
            case .identified(let identity):
                established(identity)
            case .refuse(let refusal):
                refused(refusal, date: date, now: now, actions: &actions)
                return false
            case .hold(let consultation, let milliseconds):
                heldCheck = index
                requestPhase = .held
                timers.start(.verdict(index), at: now + milliseconds, &actions)
                actions.append(.consultCheck(index, consultation))
                return false
            }
        }
        guard let limiter = route?.rateLimiter else { return true }
        return admit(limiter, date: date, now: now, actions: &actions)
    }

    /// The route's per-client limits, counted under the identity the checks established (else
    /// the client's address): over one, 429 with `Retry-After`, nothing read of the body.
    mutating func admit(_ limiter: ClientLimiter, date: [UInt8], now: Int64, actions: inout ActionBuffer)
        -> Bool
    {
        let subject = identity?.subject ?? ""
        let key: ClientKey = subject.isEmpty ? .address(client) : .identity(subject)
        let declared: Int64? =
            switch upstreamFraming {
            case .length(let length): length
            case .none: 0
            default: nil
            }
        switch limiter.admit(key: key, declaredBytes: declared, now: now) {
        case .admitted(let ticket):
            limiterTicket = ticket
            return true
        case .limited(let kind, let seconds):
            let refusal = Refusal(
                status: 429, reason: "rate_limit: over the route's \(kind.configKey) per client",
                fields: [.init("Retry-After", String(seconds))], tally: .rateLimited(limit: kind.rawValue))
            refused(refusal, date: date, now: now, actions: &actions)
            return false
        }
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
            closeNowReset = .cancel
            endUpstream(reusable: false, &actions)
            finish(status: 444, now: now, actions: &actions)
            outcome = .closeNow
        }
    }

    /// A check authenticated the client.
    mutating func established(_ identity: Identity, tallied: Bool = false) {
        self.identity = identity
        record.identity = identity.subject.isEmpty ? nil : identity.subject
        if !tallied { record.tallies.append(.auth(.allowed, reason: identity.method.rawValue)) }
    }

    /// A check refused the request: its answer, fields and body go to the client.
    mutating func refused(_ refusal: Refusal, date: [UInt8], now: Int64, actions: inout ActionBuffer) {
        if let tally = refusal.tally { record.tallies.append(tally) }
        fail(ProxyError(refusal), date: date, now: now, actions: &actions)
    }

    /// The request ended: the rate limiter's ticket is given back (once, from `finish`).
    mutating func endChecks(now: Int64) {
        guard let ticket = limiterTicket, let limiter = route?.rateLimiter else { return }
        limiterTicket = nil
        limiter.end(ticket, bytes: record.bytesIn, now: now)
    }
}

extension LimitKind {
    /// The `rate_limit:` key of this limit, for the client's error body.
    var configKey: String {
        switch self {
        case .requests: "requests_per_second"
        case .bytes: "bytes_per_minute"
        case .concurrent: "concurrent uploads"
        }
    }
}
