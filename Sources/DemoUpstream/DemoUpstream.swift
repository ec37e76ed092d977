public import EventLoop
import HTTP1
import HTTPCore
import HTTPIO

/// The built-in upload server of `formgate demo-upstream`: it answers every request with
/// JSON describing exactly what it received — method, path, headers, and for multipart
/// bodies each field and each file (name, filename, content type, size, sha256); for other
/// bodies their size and sha256. Used by the quick start and the integration tests.
public final class DemoUpstream {
    let base: EventBase
    var listener: Listener?
    var connections: Set<ObjectIdentifier> = []
    var live: [ObjectIdentifier: DemoConnection] = [:]
    /// Whether to skip hashing (`--drain`: a fast sink for benchmarks).
    let drainOnly: Bool

    /// Listens on `address`.
    public init(base: EventBase, address: SocketAddress, drainOnly: Bool = false) throws(EventLoopError) {
        self.base = base
        self.drainOnly = drainOnly
        listener = try Listener(base: base, address: address, reusePort: false) { [unowned self] fd, _ in
            self.accept(fd)
        }
    }

    /// The bound address.
    public var address: SocketAddress? { listener?.boundAddress }

    private func accept(_ fd: Int32) {
        guard let socket = try? BufferedSocket.accepted(base: base, fd: fd) else { return }
        let connection = DemoConnection(socket: socket, server: self)
        live[ObjectIdentifier(connection)] = connection
        socket.enable()
    }

    func closed(_ connection: DemoConnection) {
        live[ObjectIdentifier(connection)] = nil
    }
}
