/// One entry of `listen:`: an address clients connect to, plain or TLS.
public struct ListenerConfig: Sendable, Equatable {
    /// `address:` HOST:PORT.
    public var address: String
    /// `tls:` the listener's TLS settings; `nil` for plain HTTP.
    public var tls: TLSSettings?

    /// A listener on `address`, plain unless `tls` is given.
    public init(address: String, tls: TLSSettings? = nil) {
        self.address = address
        self.tls = tls
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
