/// One clamd scanner (`scanners: { NAME: { address: ..., ... } }`), as configured.
public struct ClamdSettings: Sendable, Hashable {
    /// Where clamd listens.
    public enum Address: Sendable, Hashable, CustomStringConvertible {
        /// A Unix socket (`unix:/run/clamav/clamd.ctl`).
        case unix(path: String)
        /// A TCP address (`127.0.0.1:3310`, `tcp://clamd.internal:3310`).
        case tcp(host: String, port: Int)

        public var description: String {
            switch self {
            case .unix(let path): "unix:\(path)"
            case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            }
        }
    }

    /// The scanner's name (`scan: { clamd: NAME }`).
    public var name: String
    public var address: Address
    /// How long clamd may go without taking bytes or, once the file is sent, without
    /// answering; then the scan failed.
    public var timeoutMilliseconds: Int64
    /// The largest file scanned; a larger one is refused (413) or passed unscanned
    /// (`oversize: allow`).
    public var maxBytes: Int64
    /// Connections to clamd per worker at most: a file that finds none waits (its client's
    /// reads paused) until one is free.
    public var connections: Int
    /// clamd's own configuration file, read by `formgate check` to compare its limits with
    /// `maxBytes` (nil: not known).
    public var configFile: String?

    public init(
        name: String, address: Address, timeoutMilliseconds: Int64 = 30_000, maxBytes: Int64 = 100 << 20,
        connections: Int = 16, configFile: String? = nil
    ) {
        self.name = name
        self.address = address
        self.timeoutMilliseconds = timeoutMilliseconds
        self.maxBytes = maxBytes
        self.connections = connections
        self.configFile = configFile
    }
}
