/// One entry of `listen:`: an address clients connect to, plain or TLS.
public struct ListenerConfig: Sendable, Equatable {
    /// `address:` HOST:PORT.
    public var address: String
    /// `tls:` the listener's TLS settings; `nil` for plain HTTP.
    public var tls: TLSSettings?
    /// `http2:` whether and how the listener serves HTTP/2.
    public var http2: HTTP2Settings

    /// A listener on `address`, plain unless `tls` is given.
    public init(address: String, tls: TLSSettings? = nil, http2: HTTP2Settings = HTTP2Settings()) {
        self.address = address
        self.tls = tls
        self.http2 = http2
    }

    /// Whether connections may speak HTTP/2: ALPN `h2` on a TLS listener (unless
    /// `http2.enabled: false`), prior-knowledge h2c on a plain one with `http2.h2c: true`.
    public var servesHTTP2: Bool { tls != nil ? http2.enabled : http2.h2c }

    /// `http2:` of a listener (RFC 9113 settings FormGate announces).
    public struct HTTP2Settings: Sendable, Equatable {
        /// `enabled:` a TLS listener offers `h2` in ALPN before `http/1.1` (default true).
        public var enabled = true
        /// `h2c:` a plain listener takes HTTP/2 with prior knowledge: a connection that opens
        /// with the connection preface (default false; HTTP/1.1 is served either way).
        public var h2c = false
        /// `max_concurrent_streams:` SETTINGS_MAX_CONCURRENT_STREAMS (default 128).
        public var maxConcurrentStreams = 128
        /// `stream_window:` each stream's receive window, the most of one upload's body held
        /// before FormGate has passed it on (default 1 MiB; the protocol's 64 KiB is far too
        /// small for uploads over any distance).
        public var streamWindow: Int64 = 1 << 20
        /// `connection_window:` the connection's receive window (default 16 MiB).
        public var connectionWindow: Int64 = 16 << 20

        /// The defaults.
        public init() {}
    }

    /// `tls:` of a listener.
    public struct TLSSettings: Sendable, Equatable {
        /// `certificates:` in order: the first is served to clients that send no SNI name,
        /// the others to the names they cover.
        public var certificates: [Certificate]
        /// `min_version:` `"1.2"` (the default) or `"1.3"`; 1.0 and 1.1 are never accepted.
        public var minimumVersion: String

        /// TLS settings with these certificates.
        public init(certificates: [Certificate], minimumVersion: String = "1.2") {
            self.certificates = certificates
            self.minimumVersion = minimumVersion
        }
    }

    /// One `{ cert, key }` of `certificates:`: PEM files, read again on every SIGHUP.
    public struct Certificate: Sendable, Equatable {
        /// `cert:` the certificate chain, leaf first.
        public var certificate: String
        /// `key:` the leaf's private key.
        public var key: String

        /// Names the two files.
        public init(certificate: String, key: String) {
            self.certificate = certificate
            self.key = key
        }
    }

    /// The versions `min_version:` accepts.
    public static let minimumVersions: Set<String> = ["1.2", "1.3"]
}
