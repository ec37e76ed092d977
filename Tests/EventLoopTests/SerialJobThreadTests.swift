import Dispatch
import EventLoop
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite struct SerialJobThreadTests {
    /// Jobs run in the order queued, off the caller's thread, and `finish` runs every one.
    @Test func runsInOrderOffTheCaller() {
        let jobs = SerialJobThread(name: "fg-test-jobs")
        let seen = Mutex<[Int]>([])
        let callers = Mutex<Set<UInt>>([])
        let caller = UInt(pthread_self())
        for index in 0..<1000 {
            jobs.submit {
                seen.withLock { $0.append(index) }
                let me = UInt(pthread_self())
                callers.withLock { _ = $0.insert(me) }
            }
        }
        jobs.finish()
        #expect(seen.withLock { $0 } == Array(0..<1000))
        #expect(callers.withLock { $0.count } == 1)
        #expect(!callers.withLock { $0.contains(caller) })
    }

    /// A job that blocks does not block `submit`: the caller queues behind it and goes on.
    @Test func submitNeverWaitsForAJob() {
        let jobs = SerialJobThread(name: "fg-test-jobs")
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let seen = Mutex<[String]>([])
        jobs.submit {
            started.signal()
            gate.wait()
            seen.withLock { $0.append("first") }
        }
        started.wait()
        // The first job holds the thread; these return at once (a hang here fails the test run).
        jobs.submit { seen.withLock { $0.append("second") } }
        jobs.submit { seen.withLock { $0.append("third") } }
        #expect(seen.withLock { $0 }.isEmpty)
        gate.signal()
        jobs.finish()
        #expect(seen.withLock { $0 } == ["first", "second", "third"])
    }

    /// After `finish`, a job runs on the caller's thread: nothing queued is ever dropped.
    @Test func jobsAfterFinishRunHere() {
        let jobs = SerialJobThread(name: "fg-test-jobs")
        let ran = Mutex(false)
        jobs.finish()
        jobs.submit { ran.withLock { $0 = true } }
        #expect(ran.withLock { $0 })
        #expect(jobs.failure == nil)
    }

    /// A job's captures are released off the lock: an object whose deinit queues a job (a tus
    /// request dropped by its last store job) does not deadlock the thread.
    @Test func capturesThatQueueJobsWhenReleasedDoNotDeadlock() {
        final class Requeues: @unchecked Sendable {
            let jobs: SerialJobThread
            let done: DispatchSemaphore
            init(_ jobs: SerialJobThread, _ done: DispatchSemaphore) {
                self.jobs = jobs
                self.done = done
            }
            deinit { jobs.submit { [done] in done.signal() } }
        }
        let jobs = SerialJobThread(name: "fg-test-jobs")
        let done = DispatchSemaphore(value: 0)
        do {
            let captured = Requeues(jobs, done)
            jobs.submit { _ = captured }
        }
        // Signalled at once when it works; the deadline only bounds a deadlock's hang.
        #expect(done.wait(timeout: .now() + 30) == .success)
        jobs.finish()
    }
}
