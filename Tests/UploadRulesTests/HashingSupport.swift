import Dispatch
import Foundation
import Synchronization

@testable import UploadRules

/// Counts a `DigestQueue`'s signals and lets a test thread wait for the next one.
final class QueueSignals: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let fired = Atomic<Int>(0)

    /// The signal to give the queue.
    var signal: @Sendable () -> Void {
        { [self] in
            fired.add(1, ordering: .sequentiallyConsistent)
            semaphore.signal()
        }
    }

    /// Signals so far.
    var count: Int { fired.load(ordering: .sequentiallyConsistent) }

    /// Blocks the test thread until a signal it has not waited for yet.
    func wait() { semaphore.wait() }
}

enum Hashing {
    /// Starts real threads (Foundation's: the tests cannot use EventLoop).
    static func startThread(_ name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread { body() }
        thread.name = name
        thread.start()
    }

    /// A pool whose threads never run: the test hashes each block with `hashNextBlock()`.
    static func manualPool(threads: Int = 1) -> DigestPool {
        DigestPool(threads: threads) { _, _ in }
    }

    /// Hashes every queued block on the test thread; returns how many there were.
    @discardableResult
    static func drain(_ pool: DigestPool) -> Int {
        var count = 0
        while pool.hashNextBlock() { count += 1 }
        return count
    }
}
