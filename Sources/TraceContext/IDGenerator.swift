import HTTPCore
import Synchronization

/// The random source of trace and span ids: SplitMix64 over one process-wide state, seeded
/// once from `SecureRandom` (the kernel's generator) and advanced by one atomic add per 64
/// bits, so any event-loop thread draws ids without a lock, a system call or a wait.
///
/// Ids must be unique, not secret: successive outputs never repeat within 2^64 draws
/// (SplitMix64's output function is a bijection of its state), and replicas seeded apart do
/// not collide; but whoever sees one id can compute the ones that follow. This is no
/// generator for keys or tokens (`SecureRandom` is).
public struct IDGenerator: RandomNumberGenerator, Sendable {
    public init() {}

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        SharedSplitMix.shared.next()
    }
}

/// The one state behind every `IDGenerator`.
private final class SharedSplitMix: Sendable {
    static let shared = SharedSplitMix()

    private let state: Atomic<UInt64>

    private init() {
        var seed = SecureRandom()
        state = Atomic(seed.next())
    }

    func next() -> UInt64 {
        // SplitMix64 (Steele, Lea, Flood 2014): add the golden-ratio increment, then mix.
        var value = state.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}
