import HTTP1
import HTTPCore
import UploadRules

/// Reading the body into the sinks: how far one read goes and why it stops; the rules' end
/// and their held output.
extension ExchangeRequest {
    /// Where reading the body stopped.
    enum ReadStep {
        /// The body is malformed, a rule refused it, a spool failed or a limit was passed.
        case failed(ProxyError)
        /// The body is whole in the decoder: its end goes into the sinks next.
        case complete
        /// The length was declared and the head that waited for it can go, with the staged
        /// bytes; the rest streams straight upstream.
        case headCanGo(length: Int64)
        /// Nothing more for now: the input is read, the rules want a pause, or (`blocked`) more
        /// than the high watermark waits upstream or a spool's writes lag behind.
        case stopped(blocked: Bool)
    }

    /// Moves body bytes from `input` into `sink` (pointed where they go; chunks when
    /// `chunked`) until the input has nothing more the body may take or something stops it.
    /// `counted` grows by the body bytes of every step that forwarded cleanly.
    mutating func read(
        input: some ByteSource, sink: Sink, chunked: Bool, awaitsEndStream: Bool, upstreamReady: Bool,
        limits: Limits, highWater: Int, counted: inout Int64, actions: inout ActionBuffer
    ) -> ReadStep {
        var available = readable(input.count, awaitsEndStream: awaitsEndStream)
        while available > 0 {
            if pendingLength != nil, let error = stagedTooMuch(buffered(sink, actions)) {
                return .failed(error)
            }
            if mustWait(sink, actions, highWater: highWater) { return .stopped(blocked: true) }
            let before = decoder.payloadBytes
            if let error = forward(
                input: input, available: &available, to: sink, chunked: chunked,
                awaitsEndStream: awaitsEndStream,
                actions: &actions)
            {
                return .failed(error)
            }
            counted += decoder.payloadBytes - before
            if let error = limitError(sink, limits: limits) { return .failed(error) }
            let headCanGo = pendingLength != nil && declareLengthIfKnown() && upstreamReady
            if decoder.isComplete { return .complete }
            if headCanGo, case .length(let length) = upstreamFraming { return .headCanGo(length: length) }
            // A backed-up hashing queue also pauses; its signal brings `hashingProgressed`.
            if rulesWantPause || decoder.payloadBytes == before { break }
        }
        return .stopped(blocked: false)
    }

    /// Whether forwarding waits: more than `highWater` waits for the upstream, or a spool's
    /// writes lag behind (its signal brings `hashingProgressed`, as a backed-up hashing queue's
    /// does).
    func mustWait(_ sink: Sink, _ actions: ActionBuffer, highWater: Int) -> Bool {
        if !spooled, pendingLength == nil, buffered(sink, actions) > highWater { return true }
        return spooled && sink.spoolBacklogged
    }

    /// Bytes waiting on the way to the upstream: its output (or the staging buffer) as `sink`
    /// (pointed where the bytes go) reads it now, what queued actions will add, and what the
    /// rules hold behind a pending digest or verdict.
    func buffered(_ sink: Sink, _ actions: ActionBuffer) -> Int {
        heldBytes + sink.queued + actions.pendingUpstreamBytes
    }

    /// Whether client reads should pause: the rules want it, a spool's writes lag behind, or
    /// more than `highWater` (`waiting`) waits for the upstream of a body that streams.
    func wantsClientPaused(waiting: Int, spoolBacklogged: Bool, highWater: Int) -> Bool {
        rulesWantPause || spoolBacklogged || (!spooled && pendingLength == nil && waiting > highWater)
    }

    /// Closes the multipart body into `sink`; returns whether the rules hold its end (behind a
    /// digest or a file's verdict).
    mutating func finishRules(into sink: Sink, chunked: Bool) throws(ProxyError) -> Bool {
        guard multipart != nil else { return false }
        multipart!.direct(to: sink, chunked: chunked)
        try multipart!.finish()
        return multipart!.rewriter.isHolding
    }

    /// Lets the rules' held output whose digests or verdicts are ready go into `sink`.
    /// Returns whether this released the body's held end (the body is then whole in the
    /// sinks).
    mutating func resumeRules(into sink: Sink, chunked: Bool) -> Bool {
        guard multipart != nil else { return false }
        multipart!.direct(to: sink, chunked: chunked)
        multipart!.rewriter.resume()
        guard phase == .ending(.rules), !multipart!.rewriter.isHolding else { return false }
        phase = .done
        return true
    }

    /// Opens the spools of a spooled body (and the file spool of `order: fields_first`).
    func openSpools(_ sink: Sink) -> ProxyError? {
        guard spooled else { return nil }
        var spools = sink
        guard spools.openSpools(files: multipart?.rewriter.splitsFiles ?? false) else {
            return ProxyError(.spoolFailed, detail: "cannot create a temp file for the request body")
        }
        return nil
    }

    /// The spooled body is whole in the spools: flushes them. The body is `done` once every
    /// write landed; while some are in flight it ends with `spoolWrites` (the shell's progress
    /// signal flushes again).
    mutating func flushSpools(_ sink: Sink) -> SpoolFlush {
        var spools = sink
        let flush = spools.flushSpools()
        phase = flush == .pending ? .ending(.spoolWrites) : .done
        return flush
    }

    /// Inspected files that ended (`FileInspection`): each one's verdict is asked for, with a
    /// deadline; its final byte and everything after it wait in the rules' holds meanwhile.
    @discardableResult
    mutating func consultInspections(
        _ inspection: (any FileInspection)?, now: Int64, timers: inout TimerSet, _ actions: inout ActionBuffer
    ) -> [HoldID] {
        guard multipart != nil, let inspection else { return [] }
        var holds: [HoldID] = []
        for asked in multipart!.rewriter.takeVerdictRequests() {
            timers.start(
                .fileVerdict(asked.hold.rawValue), at: now + inspection.timeoutMilliseconds, &actions)
            actions.append(.consultFile(asked, inspection))
            holds.append(asked.hold)
        }
        return holds
    }
}
