import CLibevent
import EventLoop
import HTTPCore
import HTTPIO
import ProxyCore
import UploadRules

#if canImport(Glibc)
    import Glibc
#endif

/// What hosts an exchange in the shell (an HTTP/1.1 connection; an HTTP/2 stream): the
/// exchange's I/O, and the state-machine events the shared code reports back. The upstream
/// connection's events and the auth-service consult are the same for both (the extension).
protocol ExchangeHost: UpstreamOwner {
    /// The exchange's upstream connection, staging buffer, spools and auth check.
    var io: ExchangeIO { get }
    /// The buffer the exchange's response bytes go to.
    var clientOutput: EvBuffer { get }
    /// Whether the host still serves its exchange (not closed, not finished).
    var isServing: Bool { get }
    /// Reports `event` to the state machine (its actions are queued, not executed).
    func report(_ event: ExchangeIOEvent)
    /// Executes the actions the events queued.
    func execute()
}

extension ExchangeHost {
    func upstreamConnected(_ upstream: UpstreamConnection) {
        guard isServing, upstream === io.upstream else { return }
        report(.upstreamConnected)
        execute()
    }

    func upstreamWritable(_ upstream: UpstreamConnection) {
        guard isServing, upstream === io.upstream else { return }
        report(.upstreamWritable)
        execute()
    }

    func upstreamReadable(_ upstream: UpstreamConnection) {
        guard isServing, upstream === io.upstream else { return }
        report(.upstreamReadable)
        execute()
    }

    func upstream(_ upstream: UpstreamConnection, failed events: SocketEvents) {
        guard isServing, upstream === io.upstream else {
            io.worker.pool.discard(upstream)
            return
        }
        let tlsError = upstream.socket.tlsError
        let failure: UpstreamFailure =
            events.contains(.endOfFile) && !events.contains(.error)
            ? .closed(tlsError: tlsError) : .error(tlsError: tlsError)
        report(.upstreamFailed(failure))
        execute()
    }

    /// Check `index` of the route held the request: the shell executes what the hold asks
    /// (`Consultation`) and reports the verdict.
    func consult(check index: Int, _ consultation: Consultation) {
        switch consultation {
        case .sharedLimit(let limit, let client, let declaredBytes):
            guard let shared = io.worker.sharedLimits else {
                // `redis:` went away in a reload: the route's own limits decide.
                return report(.verdict(index: index, .decideLocally))
            }
            io.sharedDecision += 1
            let decision = io.sharedDecision
            shared.decide(limit, client: client, declaredBytes: declaredBytes) { [weak self] verdict, lease in
                guard let self, self.isServing, self.io.sharedDecision == decision else {
                    if let lease { shared.end(lease, bytes: 0) }
                    return
                }
                self.io.sharedLease = lease
                self.report(.verdict(index: index, verdict))
                self.execute()
            }
        case .authService(let service, let request):
            io.authCheck?.cancel()
            io.authCheck = AuthServiceClient(
                base: io.worker.base, settings: service.settings, request: request.head,
                client: request.client,
                clientTLS: request.secure, tls: io.worker.pool.clientTLS()
            ) { [unowned self] answer in
                self.io.authCheck = nil
                self.report(.verdict(index: index, service.verdict(for: answer, request: request)))
                self.execute()
            }
        }
    }

    /// An inspected file ended: its stream's verdict is reported when it comes (at once when it
    /// is known). A file without a stream (the loop cannot inspect) fails closed, at once.
    func consult(file request: FileVerdictRequest, _ inspection: any FileInspection) {
        guard let stream = request.stream else { return report(.fileVerdict(request.hold, nil)) }
        let hold = request.hold
        var synchronous = true
        // The stream lives in the exchange's rules, which may outlive this host (an HTTP/2
        // stream's): the host is not kept alive for it.
        stream.whenDecided { [weak self] decision in
            guard let self, self.isServing else { return }
            self.report(.fileVerdict(hold, decision))
            if !synchronous { self.execute() }
        }
        synchronous = false
    }
}

/// The shell resources of one exchange — its upstream connection, the staging buffer, the
/// spools of `request_body: buffer` and the auth-service request — and what the upstream
/// actions do to them (`ExchangeTransport`). An HTTP/1.1 connection keeps one across its requests.
final class ExchangeIO {
    unowned let worker: Worker
    /// The exchange's record on the worker's live board, while it shows there.
    var liveSlot: LiveSlot?
    /// The exchange's upstream connection.
    var upstream: UpstreamConnection?
    /// Body bytes read before the upstream connection is ready (made when first written: a
    /// body that goes straight upstream never needs one).
    var staging: OwnedEvBuffer {
        if let stagingBuffer { return stagingBuffer }
        let buffer = OwnedEvBuffer()
        stagingBuffer = buffer
        return buffer
    }
    private var stagingBuffer: OwnedEvBuffer?
    /// The bytes staged so far.
    var stagedCount: Int { stagingBuffer?.buffer.count ?? 0 }
    /// The spools of `request_body: buffer`.
    var spool: Spool?
    var fileSpool: Spool?
    /// The auth service being asked about the current request.
    var authCheck: AuthServiceClient?
    /// While the rules read the input: file content moved, not copied (`InputLoan`).
    var loan = InputLoan()
    /// The shared rate limit's slot of the current request, given back when it ends.
    var sharedLease: SharedLease?
    /// Numbers the shared-limit decisions asked, so that a late answer to an earlier request is
    /// recognised (its lease is given back at once).
    var sharedDecision = 0

    init(worker: Worker) {
        self.worker = worker
    }

    /// The buffer counts the state machine decides backpressure from.
    func levels(clientOutput: Int) -> BufferLevels {
        BufferLevels(
            clientOutput: clientOutput, upstreamOutput: upstream?.socket.output.count ?? 0,
            staging: stagedCount, spool: spool?.size ?? 0, fileSpool: fileSpool?.size ?? 0)
    }

    /// Writes body bytes to `target`: through the loan while one is open, else a copy.
    func write(_ bytes: UnsafeRawBufferPointer, to target: EvBuffer) {
        if loan.isOpen {
            loan.write(bytes, to: target)
        } else {
            target.add(bytes)
        }
    }

    /// Writes body bytes to `target` as `write(_:to:)` does, sharing them with `reader` when
    /// they move (`InputLoan.write(_:to:sharing:)`); returns whether they will be shared.
    func write(
        _ bytes: UnsafeRawBufferPointer, to target: EvBuffer, sharingWith reader: any SharedBytesReader
    )
        -> Bool
    {
        guard loan.isOpen else {
            target.add(bytes)
            return false
        }
        return loan.write(
            bytes, to: target, sharing: { regions, release in reader.attach(regions, release: release) })
    }

    /// Moves the staged body bytes to the upstream's output.
    func moveStagingToUpstream() {
        if let upstream, let stagingBuffer { stagingBuffer.buffer.moveAll(to: upstream.socket.output) }
    }

    /// The exchange is done with its upstream connection: back to the pool.
    func releaseUpstream() {
        if let upstream {
            upstream.requestsServed += 1
            worker.pool.release(upstream)
        }
        upstream = nil
    }

    /// The upstream connection closes without completing its exchange.
    func abortUpstream() {
        if let upstream { worker.pool.discard(upstream) }
        upstream = nil
    }

    /// Takes a pooled connection or opens one; the host hears when it is ready.
    func connect(_ target: UpstreamURL, host: some ExchangeHost) {
        do throws(ProxyError) {
            let connection = try worker.pool.acquire(target, owner: host)
            upstream = connection
            connection.socket.setWatermarks(readHigh: worker.settings.highWater, writeLow: 0)
            if connection.isConnected { host.report(.upstreamConnected) }
        } catch {
            host.report(.upstreamFailed(.unreachable(error.detail)))
        }
    }

    /// Queues the spool, then the file spool, less `skip` leading bytes (`evbuffer_add_file`
    /// takes each descriptor).
    func sendSpools(skip: Int64, host: some ExchangeHost) {
        guard let output = upstream?.socket.output else { return }
        var skip = skip
        for part in [spool, fileSpool].compactMap({ $0 }) {
            let fd = part.takeDescriptor()
            let offset = min(skip, part.size)
            skip -= offset
            guard part.size - offset > 0 else {
                _ = Glibc.close(fd)
                continue
            }
            guard evbuffer_add_file(output.raw, fd, offset, part.size - offset) == 0 else {
                spool = nil
                fileSpool = nil
                host.report(.upstreamFailed(.spoolSend))
                return
            }
        }
        spool = nil
        fileSpool = nil
    }

    /// The exchange ended, having read `bytes` of its body: its shared-limit slot is given back.
    func endSharedLease(bytes: Int64) {
        guard let lease = sharedLease else { return }
        sharedLease = nil
        worker.sharedLimits?.end(lease, bytes: bytes)
    }

    /// The exchange ended: its staged bytes and spools go.
    func exchangeFinished() {
        if let stagingBuffer { stagingBuffer.buffer.drain(stagingBuffer.buffer.count) }
        spool = nil
        fileSpool = nil
    }

    /// The host closes: everything the exchange held goes, the upstream connection closed.
    func close() {
        authCheck?.cancel()
        authCheck = nil
        sharedDecision += 1
        endSharedLease(bytes: 0)
        if let upstream { worker.pool.discard(upstream) }
        upstream = nil
        spool = nil
        fileSpool = nil
    }
}
