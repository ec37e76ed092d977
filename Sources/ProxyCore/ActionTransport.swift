public import UploadRules

/// What a transport supplies to the one executor of `ProxyAction`s (`perform(_:)`): its
/// client's output and input, pause and resume of that input, its window credit (HTTP/2), its
/// timers, and the exchange's upstream I/O. Every transport (an HTTP/1.1 connection, an
/// HTTP/2 connection and its streams, a test's fake shell) executes actions through
/// `perform`, so an action means the same thing on each; a transport only says how its
/// buffers do it.
///
/// For an HTTP/2 connection "the client" is the stream the last `selectStream` named (`0`:
/// the connection itself, whose socket `setClientReading` pauses). A stream's input is its
/// DATA: paused, it is not handed to the exchange, so its window stays shut (the machine
/// gives back only what was handed on); resumed, the machine reads what waited.
public protocol ActionTransport: AnyObject {
    /// Writes `range` of the action buffer's byte store to the client (HTTP/2: the stream's
    /// response body).
    func sendClient(_ range: Range<Int>)
    /// HTTP/2: sends `head` on the stream.
    func respondClient(_ head: StreamResponseHead)
    /// HTTP/2: the stream's response body is complete.
    func endClientStream()
    /// Stops (`false`) or resumes reading the client's input.
    func setClientReading(_ reading: Bool)
    /// Runs the client's buffered input through the state machine again.
    func processClientInput()
    /// Drops what the client's input holds.
    func discardClientInput()
    /// Moves `count` request body bytes from the client's input to `destination`.
    func moveRequestBody(_ count: Int, to destination: BodyDestination)
    /// Sends a FIN once the output is written.
    func shutdownClientWrite()
    /// Closes the client connection.
    func closeClient()

    /// Takes a pooled upstream connection to `target` or starts connecting one.
    func connectUpstream(_ target: UpstreamURL)
    /// Writes `range` of the action buffer's byte store to the upstream.
    func sendUpstream(_ range: Range<Int>)
    /// Moves the staged body bytes to the upstream's output.
    func moveStagingToUpstream()
    /// Appends the spools to the upstream's output, less `skip` leading bytes.
    func sendSpoolsUpstream(skip: Int64)
    /// Moves `count` response body bytes from the upstream's input to the client.
    func moveResponseBody(_ count: Int)
    /// Stops (`false`) or resumes reading the upstream.
    func setUpstreamReading(_ reading: Bool)
    /// Runs the upstream's buffered input through the state machine again.
    func processUpstreamInput()
    /// Gives the upstream connection back to the pool.
    func releaseUpstream()
    /// Closes the upstream connection without completing its exchange.
    func abortUpstream()

    /// Arms (or re-arms) timer `id` for `deadline`.
    func startTimer(_ id: TimerID, deadline: Int64)
    /// Disarms timer `id`.
    func cancelTimer(_ id: TimerID)
    /// Executes `consultation` for check `index` of the exchange's route and reports its
    /// verdict.
    func consultCheck(_ index: Int, _ consultation: Consultation)
    /// Asks `inspection` about the file of `request` and reports the decision for its hold.
    func consultFile(_ request: FileVerdictRequest, _ inspection: any FileInspection)
    /// A request started (the in-flight gauge).
    func exchangeStarted()
    /// Writes an exchange's (or a refusal's) log record: the next
    /// `ActionBuffer.takeFinishedRecord()` of the buffer being executed.
    func finish()
    /// Counts request fields dropped for a `_` in their name.
    func droppedUnderscoreFields(_ count: Int)

    /// HTTP/2: the client actions that follow are stream `id`'s (`0`: the connection's).
    func selectStream(_ id: Int32)
    /// HTTP/2: reports stream `id`'s input back to the machine.
    func settleStream(_ id: Int32)
    /// HTTP/2: gives `count` bytes back to stream `id`'s window and the connection's.
    func consumeWindow(_ id: Int32, _ count: Int)
    /// HTTP/2: RST_STREAM on stream `id` (after its answer with `afterAnswer`).
    func resetStream(_ id: Int32, _ code: StreamResetCode, afterAnswer: Bool)
    /// HTTP/2: stops handing stream `id`'s DATA over and drops what it holds.
    func discardStreamInput(_ id: Int32)
    /// HTTP/2: drops what the transport holds for stream `id`.
    func closeStream(_ id: Int32)
    /// HTTP/2: sends GOAWAY with `code`.
    func goAway(_ code: GoAwayCode)
    /// HTTP/2: begins a graceful shutdown.
    func shutdownSession()
    /// HTTP/2: writes what the session has to send into the client's output now.
    func flushSession()
}

extension ActionTransport {
    /// Executes `action`: the one place an action gets its meaning, for every transport.
    @inlinable
    public func perform(_ action: ProxyAction) {
        switch action {
        case .sendClient(let range): sendClient(range)
        case .pauseClientReads: setClientReading(false)
        case .resumeClientReads: setClientReading(true)
        case .respondClient(let head): respondClient(head)
        case .endClientStream: endClientStream()
        case .processClientInput: processClientInput()
        case .discardClientInput: discardClientInput()
        case .moveRequestBody(let count, let destination): moveRequestBody(count, to: destination)
        case .shutdownClientWrite: shutdownClientWrite()
        case .closeClient: closeClient()
        case .startTimer(let id, let deadline): startTimer(id, deadline: deadline)
        case .cancelTimer(let id): cancelTimer(id)
        case .consultCheck(let index, let consultation): consultCheck(index, consultation)
        case .consultFile(let request, let inspection): consultFile(request, inspection)
        case .exchangeStarted: exchangeStarted()
        case .finish: finish()
        case .droppedUnderscoreFields(let count): droppedUnderscoreFields(count)
        default: performUpstream(action)
        }
    }

    @inlinable
    func performUpstream(_ action: ProxyAction) {
        switch action {
        case .connectUpstream(let target): connectUpstream(target)
        case .sendUpstream(let range): sendUpstream(range)
        case .moveStagingToUpstream: moveStagingToUpstream()
        case .sendSpoolsUpstream(let skip): sendSpoolsUpstream(skip: skip)
        case .moveResponseBody(let count): moveResponseBody(count)
        case .pauseUpstreamReads: setUpstreamReading(false)
        case .resumeUpstreamReads: setUpstreamReading(true)
        case .processUpstreamInput: processUpstreamInput()
        case .releaseUpstream: releaseUpstream()
        case .abortUpstream: abortUpstream()
        default: performHTTP2(action)
        }
    }

    @inlinable
    func performHTTP2(_ action: ProxyAction) {
        switch action {
        case .stream(let id): selectStream(id)
        case .settleStream(let id): settleStream(id)
        case .consumeWindow(let id, let count): consumeWindow(id, count)
        case .resetStream(let id, let code, let afterAnswer): resetStream(id, code, afterAnswer: afterAnswer)
        case .discardStreamInput(let id): discardStreamInput(id)
        case .closeStream(let id): closeStream(id)
        case .goAway(let code): goAway(code)
        case .shutdownSession: shutdownSession()
        case .flushSession: flushSession()
        default: break
        }
    }
}

/// An HTTP/1.1 transport never receives the HTTP/2 actions (no state machine of its emits
/// them): they do nothing there.
extension ActionTransport {
    public func respondClient(_ head: StreamResponseHead) {}
    public func endClientStream() {}
    public func selectStream(_ id: Int32) {}
    public func settleStream(_ id: Int32) {}
    public func consumeWindow(_ id: Int32, _ count: Int) {}
    public func resetStream(_ id: Int32, _ code: StreamResetCode, afterAnswer: Bool) {}
    public func discardStreamInput(_ id: Int32) {}
    public func closeStream(_ id: Int32) {}
    public func goAway(_ code: GoAwayCode) {}
    public func shutdownSession() {}
    public func flushSession() {}
}
