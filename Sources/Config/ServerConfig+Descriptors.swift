extension ServerConfig {
    /// Descriptors one client connection may hold at once: its socket, an upstream
    /// connection and a spool file (`request_body: buffer`).
    public static let descriptorsPerConnection = 3

    /// Descriptors kept aside from client connections: standard streams, the access log,
    /// the admin listener and its loop, /dev/urandom, and per worker its event loop, wake-up
    /// descriptor, listener, DNS socket and a few idle upstream connections beyond those
    /// its clients hold.
    public var reservedDescriptors: Int {
        32 + 16 * effectiveWorkers
    }

    /// The client connections `descriptorLimit` (the soft RLIMIT_NOFILE) leaves room for:
    /// `limits.connections`, or fewer when the limit cannot hold that many, at least one per
    /// worker.
    public func connectionCap(descriptorLimit: Int) -> Int {
        let room = (descriptorLimit - reservedDescriptors) / Self.descriptorsPerConnection
        return min(limits.connections, max(effectiveWorkers, room))
    }
}
