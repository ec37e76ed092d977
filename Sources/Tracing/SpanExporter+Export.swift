import TraceContext

/// The export thread: batching (`run`) and one batch's delivery with its retries (`deliver`).
extension SpanExporter {
    /// The thread's body: waits for a full batch, the batch delay or `shutdown`; sends; ends
    /// when `shutdown` has emptied the queue or its time is up.
    func run() {
        var connection: OTLPConnection?
        var random = IDGenerator()
        var batch: [Span] = []
        var taken: [SpanQueue.Entry] = []
        signal.lock()
        while true {
            let now = WallClock.monotonicNano()
            if let deadline = drainDeadline, queue.isEmpty || now >= deadline { break }
            let delay = WallClock.nanoseconds(milliseconds: settings.batchDelayMilliseconds)
            let due = oldestQueuedAt + delay
            let batchSize = max(1, settings.batchSize)
            guard !queue.isEmpty, queue.count >= batchSize || drainDeadline != nil || now >= due else {
                if queue.isEmpty { signal.wait() } else { signal.wait(until: due) }
                continue
            }
            queue.pop(upTo: batchSize, into: &taken)
            // What stays waits a full delay from now (the next batch, if it fills, goes sooner).
            if !queue.isEmpty { oldestQueuedAt = now }
            let current = settings
            signal.unlock()
            // Deferred spans are built here, outside the lock the loops queue under.
            for entry in taken { entry.append(to: &batch) }
            taken.removeAll(keepingCapacity: true)
            deliver(batch, settings: current, connection: &connection, random: &random)
            batch.removeAll(keepingCapacity: true)
            signal.lock()
        }
        let left = queue.removeAll()
        closed = true
        signal.unlock()
        if left > 0 { droppedSpans.add(left, ordering: .relaxed) }
        connection?.close()
    }

    /// Sends one batch until it is delivered, refused, out of attempts or out of the
    /// shutdown's time; counts the outcome.
    private func deliver(
        _ batch: [Span], settings: TracingSettings, connection: inout OTLPConnection?,
        random: inout IDGenerator
    ) {
        let body = OTLPJSON.encode(spans: batch, serviceName: settings.serviceName, version: version)
        let policy = RetryPolicy(settings)
        let timeout = WallClock.nanoseconds(milliseconds: max(1, settings.exportTimeoutMilliseconds))
        var attempt = 1
        var staleRetried = false
        while true {
            let now = WallClock.monotonicNano()
            let drain = drainInstant()
            let deadline = min(now + timeout, drain ?? .max)
            guard deadline > now else { return giveUp(batch.count, "the shutdown's time ran out") }
            if connection?.endpoint != settings.endpoint {
                connection = OTLPConnection(endpoint: settings.endpoint, userAgent: "formgate/\(version)")
            }
            let verdict: RetryPolicy.Verdict
            switch connection!.post(body, deadline: deadline) {
            case .answered(let status, let retryAfter):
                verdict = RetryPolicy.verdict(status: status, retryAfter: retryAfter)
                if verdict != .delivered { noteFailure("\(settings.endpoint) answered \(status)") }
            case .failed(let message, let stale):
                noteFailure(message)
                // A keep-alive connection the collector closed while idle: once, at once.
                if stale, !staleRetried {
                    staleRetried = true
                    continue
                }
                verdict = .retryable(retryAfterMilliseconds: nil)
            }
            switch verdict {
            case .delivered:
                exportedSpans.add(batch.count, ordering: .relaxed)
                return
            case .rejected:
                return giveUp(batch.count, nil)
            case .retryable(let retryAfter):
                guard
                    let wait = policy.backoff(
                        afterAttempt: attempt, retryAfterMilliseconds: retryAfter, random: random.next())
                else { return giveUp(batch.count, nil) }
                guard sleep(until: WallClock.monotonicNano() + WallClock.nanoseconds(milliseconds: wait))
                else {
                    return giveUp(batch.count, "the shutdown's time ran out")
                }
                retriedAttempts.add(1, ordering: .relaxed)
                attempt += 1
            }
        }
    }

    /// Counts a batch as undeliverable.
    private func giveUp(_ spans: Int, _ reason: String?) {
        if let reason { noteFailure(reason) }
        failedBatches.add(1, ordering: .relaxed)
        droppedSpans.add(spans, ordering: .relaxed)
    }

    private func noteFailure(_ text: String) {
        signal.lock()
        lastFailureText = text
        signal.unlock()
    }

    private func drainInstant() -> UInt64? {
        signal.lock()
        defer { signal.unlock() }
        return drainDeadline
    }

    /// Waits until `instant` (monotonic ns); false at once if a shutdown's deadline comes
    /// first (a retry then could not happen in time).
    private func sleep(until instant: UInt64) -> Bool {
        signal.lock()
        defer { signal.unlock() }
        while true {
            if let drain = drainDeadline, drain <= instant { return false }
            guard WallClock.monotonicNano() < instant else { return true }
            signal.wait(until: instant)
        }
    }
}
