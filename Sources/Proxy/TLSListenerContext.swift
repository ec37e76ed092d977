public import Config
public import EventLoop
import Synchronization

/// The TLS context one listener accepts with now, shared by every worker. A reload puts a
/// new context here for connections accepted from then on; connections already accepted keep
/// the one they started with (their transport holds it), so none is dropped.
public final class TLSListenerContext: Sendable {
    /// The listener's address as configured (reloads find their listener by it).
    public let address: String
    /// What ALPN offers: `h2` first when the listener serves HTTP/2, then `http/1.1`.
    let applicationProtocols: [String]
    private let context: Mutex<TLSServerContext>

    /// Loads the listener's certificates.
    ///
    /// - Throws: `EventLoopError` naming the file OpenSSL could not use.
    public init(address: String, settings: ListenerConfig.TLSSettings, http2: Bool = false)
        throws(EventLoopError)
    {
        self.address = address
        applicationProtocols = http2 ? ["h2", "http/1.1"] : ["http/1.1"]
        context = Mutex(try Self.load(settings, applicationProtocols))
    }

    /// The context for a connection accepted now (read once per accept).
    public var current: TLSServerContext {
        context.withLock { $0 }
    }

    /// Loads `settings`' files again and, when all of them load, serves them to new
    /// connections; otherwise the running context stays.
    ///
    /// - Throws: `EventLoopError` naming the file OpenSSL could not use.
    public func reload(_ settings: ListenerConfig.TLSSettings) throws(EventLoopError) {
        let next = try Self.load(settings, applicationProtocols)
        context.withLock { $0 = next }
    }

    /// A server context for `settings`.
    static func load(_ settings: ListenerConfig.TLSSettings, _ protocols: [String]) throws(EventLoopError)
        -> TLSServerContext
    {
        try TLSServerContext(
            certificates: settings.certificates.map {
                TLSCertificateFiles(certificate: $0.certificate, key: $0.key)
            },
            minimumVersion: TLSMinimumVersion(rawValue: settings.minimumVersion) ?? .tls12,
            applicationProtocols: protocols)
    }
}
