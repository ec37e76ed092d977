#if canImport(Glibc)
    import Glibc
#endif

/// The exporter's lock and the condition its thread sleeps on, with waits bounded on the
/// monotonic clock. The lock guards bookkeeping only: nothing waits on I/O while holding it.
final class ExportSignal {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Wakes the waiting thread, if it waits. Call with the lock held.
    func signal() { pthread_cond_signal(condition) }

    /// Releases the lock until signalled (or a spurious wake-up), then takes it again.
    func wait() { pthread_cond_wait(condition, mutex) }

    /// `wait()`, but at most until `deadline` (monotonic nanoseconds).
    func wait(until deadline: UInt64) {
        var time = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        pthread_cond_timedwait(condition, mutex, &time)
    }
}
