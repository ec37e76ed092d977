#if canImport(Glibc)
    import Glibc
#endif

/// Runs blocking jobs (a resumable upload's store: `pwrite`, `fsync`, `rename`) in the order
/// they were queued, on one thread of its own, so no event loop ever waits for a disk. The
/// loop only queues (under a lock held for bookkeeping, never while a job runs); a job tells
/// its loop it is done the way the loop chose (a `Notifier`).
///
/// The thread starts with the first job and ends in `finish()`, after the jobs queued before;
/// a job queued when no thread can run (it could not be started, or `finish` was called) runs
/// on the caller's thread, so nothing queued is ever lost.
public final class SerialJobThread: @unchecked Sendable {
    /// The thread's name.
    public let name: String
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let workReady = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Under `lock`:
    private var jobs: [@Sendable () -> Void] = []
    private var thread: EventLoopThread?
    private var finished = false
    /// Why the thread could not start, if it could not (the jobs then ran on their callers).
    private var startFailure: EventLoopError?

    public init(name: String) {
        self.name = name
        pthread_mutex_init(lock, nil)
        pthread_cond_init(workReady, nil)
    }

    deinit {
        pthread_cond_destroy(workReady)
        pthread_mutex_destroy(lock)
        workReady.deallocate()
        lock.deallocate()
    }

    /// Queues `job` and returns at once (or runs it here, see the type's note).
    public func submit(_ job: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(lock)
        if thread == nil, !finished {
            do throws(EventLoopError) {
                thread = try EventLoopThread.start(name: name) { [self] in run() }
            } catch {
                startFailure = error
                finished = true
            }
        }
        guard !finished else {
            pthread_mutex_unlock(lock)
            return job()
        }
        jobs.append(job)
        pthread_cond_signal(workReady)
        pthread_mutex_unlock(lock)
    }

    /// The error that kept the thread from starting, if any.
    public var failure: EventLoopError? {
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        return startFailure
    }

    /// Runs the jobs queued so far, stops the thread and waits for it.
    public func finish() {
        pthread_mutex_lock(lock)
        finished = true
        let running = thread
        thread = nil
        pthread_cond_signal(workReady)
        pthread_mutex_unlock(lock)
        running?.join()
    }

    private func run() {
        pthread_mutex_lock(lock)
        while true {
            while jobs.isEmpty, !finished { pthread_cond_wait(workReady, lock) }
            if jobs.isEmpty { break }
            var batch = jobs
            jobs.removeAll(keepingCapacity: true)
            pthread_mutex_unlock(lock)
            for job in batch { job() }
            // Released before the lock is taken again: a job's captures may deinit objects that
            // queue jobs of their own (`submit` takes the lock).
            batch.removeAll()
            pthread_mutex_lock(lock)
        }
        pthread_mutex_unlock(lock)
    }
}
