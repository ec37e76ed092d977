import Foundation

/// A number that threads add to and a test reads (bytes sent, requests done).
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func add(_ amount: Int) {
        lock.withLock { count += amount }
    }

    var value: Int { lock.withLock { count } }
}
