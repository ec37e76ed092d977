import EventLoop
import HTTPIO
import ProxyCore
import UploadRules

/// A transport of the proxy (an HTTP/1.1 connection, an HTTP/2 connection): the actions of
/// the current exchange that only touch its I/O (`ExchangeIO`: the upstream connection,
/// staging, spools, checks) do the same on both, here; the transport names the current
/// exchange's host and its client input.
protocol ExchangeTransport: ActionTransport {
    var worker: Worker { get }
    /// The host of the exchange the actions being executed belong to, if it still has one.
    var currentHost: (any ExchangeHost)? { get }
    /// That exchange's client input (HTTP/2: the stream's DATA).
    var currentInput: EvBuffer? { get }
    /// Response body bytes were moved to the host's `clientOutput` (HTTP/2: they go on into
    /// the session).
    func responseBodyMoved()
}

extension ExchangeTransport {
    func responseBodyMoved() {}

    func discardClientInput() {
        guard let input = currentInput else { return }
        input.drain(input.count)
    }

    func moveRequestBody(_ count: Int, to destination: BodyDestination) {
        guard let input = currentInput, let io = currentHost?.io else { return }
        if destination == .upstream, let upstream = io.upstream {
            input.move(count, to: upstream.socket.output)
        } else {
            input.move(count, to: io.staging.buffer)
        }
    }

    func connectUpstream(_ target: UpstreamURL) {
        guard let host = currentHost else { return }
        host.io.connect(target, host: host)
    }

    func moveStagingToUpstream() { currentHost?.io.moveStagingToUpstream() }

    func sendSpoolsUpstream(skip: Int64) {
        guard let host = currentHost else { return }
        host.io.sendSpools(skip: skip, host: host)
    }

    func moveResponseBody(_ count: Int) {
        guard let host = currentHost else { return }
        host.io.upstream?.socket.input.move(count, to: host.clientOutput)
        responseBodyMoved()
    }

    func setUpstreamReading(_ reading: Bool) { currentHost?.io.upstream?.socket.setReading(reading) }

    func processUpstreamInput() {
        guard let host = currentHost, host.io.upstream != nil else { return }
        host.report(.upstreamReadable)
    }

    func releaseUpstream() { currentHost?.io.releaseUpstream() }

    func abortUpstream() { currentHost?.io.abortUpstream() }

    func consultCheck(_ index: Int, _ consultation: Consultation) {
        currentHost?.consult(check: index, consultation)
    }

    func consultFile(_ request: FileVerdictRequest, _ inspection: any FileInspection) {
        currentHost?.consult(file: request, inspection)
    }

    func exchangeStarted() { worker.exchangeStarted() }

    func droppedUnderscoreFields(_ count: Int) {
        worker.metrics.update { $0.ruleActions["drop_underscore_header", default: 0] += count }
    }

    /// Writes an exchange's log record: the access log and metrics, and the error log for a
    /// 5xx; the exchange's staged bytes and spools (in `io`) go.
    func log(_ record: AccessRecord, io: ExchangeIO?, peer: SocketAddress, peerHost: String) {
        if let failure = record.failure, failure.status >= 500 {
            let stream = record.clientProtocol.streamID.map { " (h2 stream \($0))" } ?? ""
            ErrorLog.shared.write(
                .warn,
                "\(failure.status) for \(peerHost) \(record.method ?? "-") \(record.path ?? "-")\(stream): \(failure.detail)"
            )
        }
        worker.log(record, client: peer)
        worker.liveFinished(record, io: io)
        io?.endSharedLease(bytes: record.bytesIn)
        io?.exchangeFinished()
    }
}
