/// Holds: how the pipeline keeps its output, in order, while a part's digests are computed
/// off the loop, or while an asynchronous verdict on an inspected file is awaited, without
/// ever waiting.
///
/// A file part that ends before its digests are ready places a hold: its digest fields are
/// framed into the holding buffer with slots for their values, and everything the pipeline
/// writes after them (the next parts, the closing delimiter) is kept behind them. `resume()`
/// fills the slots of the holds whose digests are complete and writes the held bytes into
/// the sinks up to the first hold still pending. Several holds keep their order.
extension RulePipeline {
    /// One hold not yet released.
    struct PendingHold {
        var id: HoldID
        /// The record (part) the hold belongs to.
        var record: Int
        /// The digests whose results the hold's slots take (nil once read, or for a verdict).
        var digests: PartDigests?
        /// The values of the slots, once known.
        var values: [[UInt8]]?
        /// The inspected file's stream (its log value is the record's `scan`).
        var inspected: (any InspectionStream)?
    }

    /// Whether the caller should stop reading its client: the current part is hashed off the
    /// loop and the hashing queue is backed up. The queue signals when it drains; the caller
    /// then calls `resume()` and looks again.
    public var wantsPause: Bool {
        if let inspected, inspected.wantsPause { return true }
        guard digests?.isOffloaded == true, let hashing else { return false }
        return hashing.isBackedUp
    }

    /// Whether output is held behind a pending hold: the body is not whole in the sinks yet
    /// (after `.end`, the closing delimiter is among the held bytes).
    public var isHolding: Bool { output.isHolding }

    /// The bytes kept behind pending holds; the caller pauses its client above its watermark.
    public var heldBytes: Int { output.heldBytes }

    /// The pending holds, in output order.
    public var pendingHolds: [HoldID] { holds.map(\.id) }

    /// Whether the first pending hold waits for a file's verdict (else for a digest, or
    /// nothing is held).
    public var firstHoldIsVerdict: Bool { holds.first?.inspected != nil }

    /// Releases the holds whose digests are now complete and writes the bytes behind them into
    /// the sinks, in order, up to the first hold still pending. Call on the loop thread after
    /// the hashing queue's signal (any number of times: it does nothing when nothing is
    /// ready). Returns whether any hold was released.
    @discardableResult
    public mutating func resume() -> Bool {
        guard refusal == nil else { return false }
        // An inspection that failed while its file streamed ends the request now.
        if let inspected, case .refuse(let refused)? = inspected.earlyDecision {
            refuse(refused, part: records.count - 1, inspected)
            return false
        }
        guard !holds.isEmpty else { return false }
        for index in holds.indices where holds[index].values == nil {
            guard let digests = holds[index].digests, digests.isComplete else { continue }
            let results = digests.results()
            records[holds[index].record].digests = results
            holds[index].values = results.map { Array($0.1.utf8) }
            holds[index].digests = nil
        }
        let pending = holds
        let passed = output.release { id in pending.first { $0.id == id }?.values }
        holds.removeFirst(passed)
        return passed > 0
    }

    /// Applies a verdict to a pending hold (unknown ids are ignored: the hold is gone).
    /// `.release` lets the hold's output go once its own values are ready; `.refuse` sets
    /// `refusal` and discards everything held.
    @discardableResult
    public mutating func decide(_ id: HoldID, _ decision: HoldDecision) -> Bool {
        guard refusal == nil, let index = holds.firstIndex(where: { $0.id == id }) else { return false }
        if let inspected = holds[index].inspected { records[holds[index].record].scan = inspected.logValue }
        switch decision {
        case .release:
            if holds[index].digests == nil, holds[index].values == nil { holds[index].values = [] }
            return resume()
        case .refuse(let refused):
            refusal = refused
            output.discard()
            holds.removeAll()
            return false
        }
    }

    /// Refuses the request for the inspection of part `record` (`inspected` gives its log value):
    /// everything held is discarded.
    mutating func refuse(_ refused: RuleRefusal, part record: Int, _ inspected: any InspectionStream) {
        records[record].scan = inspected.logValue
        refusal = refused
        output.discard()
        holds.removeAll()
        self.inspected = nil
        inspecting = false
    }

    /// A file part with digests ended: emits its digest fields now when they are ready (always
    /// for a part hashed inline), else places a hold whose slots `resume()` fills.
    mutating func endDigests(_ digests: PartDigests) {
        let record = records.count - 1
        let name = records[record].name
        if digests.end() {
            let results = digests.results()
            records[record].digests = results
            for (algorithm, value) in results {
                emitField(name: "\(name).\(algorithm.rawValue)", value: value)
            }
            if digests.reuse() { spareDigests = digests }
            return
        }
        let id = HoldID(rawValue: nextHold)
        nextHold += 1
        output.hold(id)
        holds.append(PendingHold(id: id, record: record, digests: digests))
        for (index, algorithm) in rules.digests.enumerated() {
            guard beginField(name: "\(name).\(algorithm.rawValue)") else { return }
            output.holdValue(id, index: index)
        }
    }

    /// The verdicts wanted for inspected files that ended since the last call, in output order.
    public mutating func takeVerdictRequests() -> [FileVerdictRequest] {
        guard !verdictRequests.isEmpty else { return [] }
        defer { verdictRequests.removeAll() }
        return verdictRequests
    }

    /// An inspected file's bytes: they go to its inspection and upstream, all but the last,
    /// which the part's end places behind the hold of the file's verdict. A decision the
    /// inspection reached early refuses the request now, or lets the rest of the file go
    /// unheld.
    mutating func inspect(_ bytes: UnsafeRawBufferPointer) {
        if let inspected {
            inspected.update(bytes)
            if let early = inspected.earlyDecision {
                switch early {
                case .refuse(let refused):
                    return refuse(refused, part: records.count - 1, inspected)
                case .release:
                    records[records.count - 1].scan = inspected.logValue
                    self.inspected = nil
                    inspecting = false
                    if let kept = keptBack { withUnsafeBytes(of: kept) { output.write($0) } }
                    keptBack = nil
                    return output.write(bytes)
                }
            }
        }
        writeKeepingLast(bytes)
    }

    /// Writes an inspected file's bytes but the last, which is kept back: the part's end
    /// places it behind the hold of the file's verdict.
    mutating func writeKeepingLast(_ bytes: UnsafeRawBufferPointer) {
        if let kept = keptBack { withUnsafeBytes(of: kept) { output.write($0) } }
        output.write(UnsafeRawBufferPointer(rebasing: bytes.dropLast()))
        keptBack = bytes.last
    }

    /// An inspected file ended: its final byte, and everything after it, wait behind a hold
    /// that only its verdict (`decide`) releases.
    mutating func holdForVerdict() {
        inspecting = false
        let stream = inspected
        inspected = nil
        stream?.end()
        let record = records.count - 1
        if let stream, let early = stream.earlyDecision {
            switch early {
            case .refuse(let refused):
                return refuse(refused, part: record, stream)
            case .release:
                // Passed unscanned (an allowed failure or oversize file): nothing to wait for.
                records[record].scan = stream.logValue
                if let kept = keptBack { withUnsafeBytes(of: kept) { output.write($0) } }
                keptBack = nil
                return
            }
        }
        let id = HoldID(rawValue: nextHold)
        nextHold += 1
        output.hold(id)
        if let kept = keptBack { withUnsafeBytes(of: kept) { output.write($0) } }
        keptBack = nil
        holds.append(PendingHold(id: id, record: record, digests: nil, inspected: stream))
        verdictRequests.append(FileVerdictRequest(hold: id, part: record, stream: stream))
    }
}
