import ProxyCore

extension ClientConnection {
    /// Check `index` of the current exchange's route held the request: the shell asks whoever
    /// the check names (an auth service) and reports the verdict. A held check the shell does
    /// not know how to consult fails closed (503).
    func consult(check index: Int) {
        guard let (check, request) = machine.exchange?.pendingCheck(now: now) else { return }
        guard let service = check as? AuthServiceCheck else {
            let refusal = Refusal(
                status: 503, reason: "the request check cannot be consulted",
                tally: .auth(.error, reason: "unavailable"))
            return reportVerdict(index, .refuse(refusal))
        }
        io.authCheck?.cancel()
        io.authCheck = AuthServiceClient(
            base: base, settings: service.settings, request: request.head, client: request.client,
            clientTLS: request.secure, tls: worker.pool.clientTLS()
        ) { [unowned self] answer in
            self.io.authCheck = nil
            self.reportVerdict(index, service.verdict(for: answer, request: request))
            self.execute()
        }
    }

    /// A held check's verdict arrived.
    func reportVerdict(_ index: Int, _ verdict: Verdict) {
        guard !closed else { return }
        machine.verdict(
            index, verdict, input: socket.input, sink: sink, levels: levels, now: now, actions: &actions)
    }
}
