/// The client part of an exchange: whether the exchange has paused the client's reads,
/// whether the client may send more of the request, when it last did (HTTP/2's lazily
/// re-armed idle timer), whether its connection may carry another request, and the reset an
/// HTTP/2 stream gets when the exchange ends. Flow state the hosts read on every event:
/// stored in the exchange, so reading it through the host's optional never copies the
/// exchange.
public struct ExchangeClient: Sendable {
    /// Whether the request came over HTTP/2 (a stream), else HTTP/1.x (a connection).
    let http2: Bool
    /// Whether this exchange has paused the client's reads (backpressure, a held request; the
    /// host sets it when its reads were paused before the exchange began).
    public internal(set) var readsPaused = false
    /// Whether the client may send more of the request (set by the host when the client had
    /// finished before the exchange began; see `Exchange.clientFinishedSending`).
    public var sending = ClientSending.open
    /// Set by the host: the connection cannot carry another request (draining, half-closed).
    /// HTTP/1 only.
    public var connectionMayPersist = true
    /// HTTP/2: when the client last sent DATA (or its reads resumed), for the stream's idle
    /// timer.
    var activity: Int64 = 0
    /// HTTP/2: the reset an outcome of `closeNow` calls for (none when the client left).
    var closeNowReset: StreamResetCode? = .internalError

    /// Whether the client sends nothing more, on HTTP/1.1 (its FIN: there is nothing to resume
    /// reading). An HTTP/2 stream that ended may still hold DATA to read.
    var inputClosed: Bool { sending == .finished && !http2 }

    /// HTTP/2: the client has not ended its stream, so the body may not be whole yet.
    var awaitsEndStream: Bool { http2 && sending == .open }

    /// HTTP/1.1: the client half-closed (FIN): nothing more comes, the connection carries no
    /// other request, and there is nothing to read.
    mutating func finishedSending() {
        sending = .finished
        connectionMayPersist = false
        readsPaused = true
    }

    /// Pauses the client's reads, once.
    mutating func pauseReads(_ actions: inout ActionBuffer) {
        guard !readsPaused else { return }
        readsPaused = true
        actions.append(.pauseClientReads)
    }

    /// Resumes reading the client; its silence counts from `now` (HTTP/2: its window was shut).
    mutating func resumeReads(now: Int64, _ actions: inout ActionBuffer) {
        guard readsPaused, !inputClosed else { return }
        readsPaused = false
        activity = now
        actions.append(.resumeClientReads)
    }

    /// HTTP/2: when the stream's idle timer is due, with its silence judged at `now`: it is
    /// not the client's while the exchange does not wait for it (`waitedFor` false: reads
    /// paused for a slow upstream, so its window is shut; a verdict pending; the response under
    /// way); `nil` after END_STREAM, when it has nothing more to send.
    mutating func idleDue(now: Int64, waitedFor: Bool, idle: Int64) -> Int64? {
        guard awaitsEndStream else { return nil }
        if readsPaused || !waitedFor { activity = now }
        return activity + idle
    }

    /// HTTP/2: the RST_STREAM the shell sends once the exchange ended with `outcome`, after
    /// what it queued (`nil`: none, the stream ends with END_STREAM both ways, or the client
    /// already reset it).
    func streamReset(_ outcome: ExchangeOutcome) -> StreamResetCode? {
        guard http2 else { return nil }
        switch outcome {
        case .complete(_, let linger): return linger ? .noError : nil
        case .refused: return sending == .finished ? nil : .noError
        case .closeNow: return closeNowReset
        case .malformed: return .protocolError
        }
    }
}
