import ProxyCore

extension ClientConnection {
    /// Check `index` of the current exchange's route held the request: the shell asks whoever
    /// the check names and reports the verdict. A check the shell cannot consult is an error
    /// the client sees as 503 (it fails closed).
    func consult(check index: Int) {
        let refusal = Refusal(
            status: 503, reason: "the request check cannot be consulted",
            tally: .auth(.error, reason: "unavailable"))
        reportVerdict(index, .refuse(refusal))
    }

    /// A held check's verdict arrived.
    func reportVerdict(_ index: Int, _ verdict: Verdict) {
        guard !closed else { return }
        machine.verdict(
            index, verdict, input: socket.input, sink: sink, levels: levels, now: now, actions: &actions)
    }
}
