public import UploadRules

/// What an exchange's own I/O reports back to its connection's state machine: its upstream
/// connection's events and the verdicts it was asked for (`consultCheck`, `consultFile`).
public enum ExchangeIOEvent: Sendable {
    /// The upstream connection is ready (a pooled one, at once).
    case upstreamConnected
    /// The upstream drained what was queued for it.
    case upstreamWritable
    /// The upstream's buffered input should be looked at again.
    case upstreamReadable
    /// The upstream connection could not be had or failed.
    case upstreamFailed(UpstreamFailure)
    /// Held check `index`'s verdict arrived.
    case verdict(index: Int, Verdict)
    /// The verdict on an inspected file arrived (`nil`: it cannot be had).
    case fileVerdict(HoldID, HoldDecision?)
}
