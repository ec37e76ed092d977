/// How an upstream connection failed, as the shell saw it.
public enum UpstreamFailure: Sendable, Equatable {
    /// No connection could be made (or taken): the reason, for the client and the log.
    case unreachable(String)
    /// The upstream closed the connection (end of file); `tlsError` when TLS said why.
    case closed(tlsError: String?)
    /// A read or write error.
    case error(tlsError: String?)
    /// The spooled body could not be queued.
    case spoolSend
}

extension UpstreamFailure {
    /// The client's error: unreachable while connecting, broken after.
    func error(connecting: Bool) -> ProxyError {
        let tls: (String?) -> String = { $0.map { " (TLS: \($0))" } ?? "" }
        switch self {
        case .unreachable(let detail):
            return ProxyError(.upstreamUnreachable, detail: detail)
        case .closed(let tlsError), .error(let tlsError):
            return connecting
                ? ProxyError(.upstreamUnreachable, detail: "upstream unreachable" + tls(tlsError))
                : ProxyError(.upstreamBroken, detail: "upstream closed the connection" + tls(tlsError))
        case .spoolSend:
            return ProxyError(.spoolFailed, detail: "cannot send the spooled body")
        }
    }
}
