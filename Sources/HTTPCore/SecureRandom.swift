import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The kernel's cryptographically secure random bytes (`/dev/urandom`, the generator behind
/// `getrandom(2)`), fetched 4 KiB at a time: `SystemRandomNumberGenerator` makes one system
/// call per 8 bytes, which showed in the small-upload profile (a boundary, a request id and a
/// file name per request). Without `/dev/urandom` (a bare chroot) it falls back to
/// `SystemRandomNumberGenerator`.
public struct SecureRandom: RandomNumberGenerator, Sendable {
    public init() {}

    public mutating func next() -> UInt64 {
        SecureRandomPool.shared.next()
    }
}

final class SecureRandomPool: Sendable {
    static let shared = SecureRandomPool()

    private struct State {
        var words = [UInt64](repeating: 0, count: 512)
        var index = 512
        var descriptor: Int32 = -2
    }

    private let state = Mutex(State())

    func next() -> UInt64 {
        state.withLock { state in
            if state.index == state.words.count {
                if state.descriptor == -2 { state.descriptor = open("/dev/urandom", O_RDONLY | O_CLOEXEC) }
                let descriptor = state.descriptor
                state.words.withUnsafeMutableBytes { buffer in
                    var filled = 0
                    while descriptor >= 0, filled < buffer.count {
                        let count = read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
                        if count > 0 {
                            filled += count
                        } else if count == 0 || errno != EINTR {
                            break
                        }
                    }
                    if filled < buffer.count {
                        var system = SystemRandomNumberGenerator()
                        for offset in stride(from: 0, to: buffer.count, by: 8) {
                            buffer.storeBytes(
                                of: system.next() as UInt64, toByteOffset: offset, as: UInt64.self)
                        }
                    }
                }
                state.index = 0
            }
            defer { state.index += 1 }
            return state.words[state.index]
        }
    }
}
