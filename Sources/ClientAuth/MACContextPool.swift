import CCrypto
import Synchronization

/// Keyed `EVP_MAC_CTX`s of one secret and hash, kept for reuse between verifications on any
/// thread (a lock around a short array; at most `limit` are kept, the rest freed).
final class MACContextPool: Sendable {
    /// The pooled contexts' addresses (`OpaquePointer` is not `Sendable`; the pool owns each
    /// context it holds, so handing the address across threads is safe).
    private let contexts = Mutex<[UInt]>([])
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    deinit {
        contexts.withLock { contexts in
            for address in contexts { EVP_MAC_CTX_free(OpaquePointer(bitPattern: address)) }
        }
    }

    /// A context from the pool, or a duplicate of `template` when the pool is empty.
    func take(orDuplicate template: OpaquePointer) -> OpaquePointer? {
        if let address = contexts.withLock({ $0.popLast() }), let context = OpaquePointer(bitPattern: address)
        {
            return context
        }
        return EVP_MAC_CTX_dup(template)
    }

    /// Returns a context; frees it if the pool is full.
    func give(_ context: OpaquePointer) {
        let kept = contexts.withLock { contexts in
            guard contexts.count < limit else { return false }
            contexts.append(UInt(bitPattern: Int(bitPattern: context)))
            return true
        }
        if !kept { EVP_MAC_CTX_free(context) }
    }
}
