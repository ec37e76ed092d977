import HTTP1
import UploadRules

/// The checks part of an exchange: the route's request checks run in order (authentication,
/// then the per-client limits), the identity they established, the check whose verdict is
/// pending and the rate limiter's ticket, given back once when the exchange ends.
struct ExchangeChecks {
    /// Where a run of the checks stopped.
    enum Result {
        /// Every check admitted the request (and the limiter, if any).
        case admitted
        /// A check or the limiter refused it.
        case refused(Refusal)
        /// Check `index` consults an outside service; its verdict is due within `milliseconds`.
        case held(index: Int, Consultation, milliseconds: Int64)
    }

    /// The route's check whose verdict is pending (it answered `hold`).
    var held: Int?
    /// The route's rate limiter admitted the request with this ticket.
    var ticket: ClientLimiter.Ticket?
    /// Who sent the request, once a check established it.
    var identity: Identity?
    /// Where the route's shared limit stands (`rate_limit: { shared: true }`).
    var shared = SharedPhase.undecided

    /// The shared limit's progress.
    enum SharedPhase {
        /// Not asked yet.
        case undecided
        /// Asked; the verdict is pending.
        case asked
        /// Redis admitted the request.
        case admitted
        /// Redis could not decide: the local limiter does (`on_error: local`).
        case local
    }

    /// Runs the route's checks from `first`, in order, until one holds or refuses, then the
    /// limiter. `declaredBytes` is the body's length when the client declared it.
    mutating func run(
        from first: Int, route: Route?, request: CheckRequest, declaredBytes: Int64?, now: Int64,
        record: inout AccessRecord
    ) -> Result {
        // Only the list is copied: `guard let route` copied the whole route per request.
        let checks = route?.checks ?? []
        var request = request
        for index in first..<max(first, checks.count) {
            request.identity = identity
            switch checks[index].check(request) {
            case .pass:
                continue
            case .identified(let identity):
                established(identity, record: &record)
            case .refuse(let refusal):
                return .refused(refusal)
            case .hold(let consultation, let milliseconds):
                held = index
                return .held(index: index, consultation, milliseconds: milliseconds)
            }
        }
        if let sharedLimit = route?.sharedLimit {
            switch shared {
            case .undecided:
                shared = .asked
                held = checks.count
                let consultation = Consultation.sharedLimit(
                    sharedLimit, client: clientKey(request.client), declaredBytes: declaredBytes)
                return .held(
                    index: checks.count, consultation, milliseconds: sharedLimit.timeoutMilliseconds + 1_000)
            case .admitted:
                return .admitted
            case .asked, .local:
                break
            }
        }
        guard let limiter = route?.rateLimiter else { return .admitted }
        return admit(limiter, client: request.client, declaredBytes: declaredBytes, now: now)
    }

    /// Whose limits the request counts against: the identity the checks established, else the
    /// client's address.
    func clientKey(_ client: [UInt8]) -> ClientKey {
        let subject = identity?.subject ?? ""
        return subject.isEmpty ? .address(client) : .identity(subject)
    }

    /// The verdict of hold `index` arrived: when it is the shared limit's, what it decided.
    mutating func sharedVerdict(_ verdict: Verdict, index: Int, route: Route?) {
        guard shared == .asked, index == (route?.checks.count ?? 0) else { return }
        switch verdict {
        case .release: shared = .admitted
        case .decideLocally: shared = .local
        case .refuse, .abort: break
        }
    }

    /// The route's per-client limits, counted under the identity the checks established (else
    /// the client's address): over one, 429 with `Retry-After`, nothing read of the body.
    mutating func admit(_ limiter: ClientLimiter, client: [UInt8], declaredBytes: Int64?, now: Int64)
        -> Result
    {
        switch limiter.admit(key: clientKey(client), declaredBytes: declaredBytes, now: now) {
        case .admitted(let ticket):
            self.ticket = ticket
            return .admitted
        case .limited(let kind, let seconds):
            return .refused(.rateLimited(kind, retryAfterSeconds: seconds))
        }
    }

    /// A check authenticated the client.
    mutating func established(_ identity: Identity, tallied: Bool = false, record: inout AccessRecord) {
        self.identity = identity
        record.identity = identity.subject.isEmpty ? nil : identity.subject
        if !tallied { record.tallies.append(.auth(.allowed, reason: identity.method.rawValue)) }
    }

    /// The request ended: the rate limiter's ticket is given back (once).
    mutating func end(route: Route?, bytes: Int64, now: Int64) {
        guard let ticket, let limiter = route?.rateLimiter else { return }
        self.ticket = nil
        limiter.end(ticket, bytes: bytes, now: now)
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
