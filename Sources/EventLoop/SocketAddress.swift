import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 socket address.
public struct SocketAddress: Sendable, CustomStringConvertible, Equatable {
    private var storage: sockaddr_storage
    private var length: socklen_t

    /// An address of unknown family (what a peer's address is when the kernel gives none).
    public static let unknown = SocketAddress(storage: sockaddr_storage(), length: 0)

    private init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    /// Copies a `sockaddr` of `length` bytes.
    init(pointer: UnsafePointer<sockaddr>, length: socklen_t) {
        var storage = sockaddr_storage()
        let count = min(Int(length), MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutableBytes(of: &storage) {
            $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: count))
        }
        self.init(storage: storage, length: socklen_t(count))
    }

    /// Parses `host:port`, `[v6]:port` (numeric addresses only).
    ///
    /// - Throws: `EventLoopError` when it is not a numeric address with a port.
    public init(parsing text: String) throws(EventLoopError) {
        // libevent refuses port 0; parse with port 1 and clear it (0 asks for a free port).
        let anyPort = text.hasSuffix(":0")
        let parsed = anyPort ? String(text.dropLast()) + "1" : text
        var storage = sockaddr_storage()
        var length = Int32(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                evutil_parse_sockaddr_port(parsed, $0, &length)
            }
        }
        guard result == 0, !text.hasSuffix(":"), text.contains(":") else {
            throw EventLoopError("not an address with a port: \(text)")
        }
        if anyPort {
            withUnsafeMutablePointer(to: &storage) { pointer in
                if Int32(pointer.pointee.ss_family) == AF_INET {
                    pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_port = 0 }
                } else {
                    pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_port = 0 }
                }
            }
        }
        self.init(storage: storage, length: socklen_t(length))
    }

    /// A Unix socket's path.
    ///
    /// - Throws: `EventLoopError` when the path is empty or longer than `sun_path` holds.
    public init(unixPath path: String) throws(EventLoopError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity, !bytes.contains(0) else {
            throw EventLoopError("not a Unix socket path: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            withUnsafeBytes(of: address) { target.copyMemory(from: $0) }
        }
        let length = MemoryLayout<sockaddr_un>.offset(of: \sockaddr_un.sun_path)! + bytes.count + 1
        self.init(storage: storage, length: socklen_t(length))
    }

    /// The local address of a socket.
    public static func local(of fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return result == 0 ? SocketAddress(storage: storage, length: length) : nil
    }

    /// Calls `body` with the `sockaddr` pointer and length.
    func withSockAddr<Result>(_ body: (UnsafePointer<sockaddr>, Int32) -> Result) -> Result {
        withUnsafePointer(to: storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, Int32(length)) }
        }
    }

    /// The port, in host byte order.
    public var port: Int {
        withSockAddr { pointer, _ in
            switch Int32(pointer.pointee.sa_family) {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin_port))
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    Int(UInt16(bigEndian: $0.pointee.sin6_port))
                }
            default:
                return 0
            }
        }
    }

    /// The numeric host (`127.0.0.1`, `::1`), without port or brackets.
    public var host: String {
        withSockAddr { pointer, _ in
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
            let converted: Bool
            switch Int32(pointer.pointee.sa_family) {
            case AF_INET:
                converted = pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var raw = address.pointee.sin_addr
                    return inet_ntop(AF_INET, &raw, &text, socklen_t(text.count)) != nil
                }
            case AF_INET6:
                converted = pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count)) != nil
                }
            default:
                converted = false
            }
            guard converted else { return "unknown" }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    public var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    public static func == (lhs: SocketAddress, rhs: SocketAddress) -> Bool {
        lhs.description == rhs.description
    }
}
