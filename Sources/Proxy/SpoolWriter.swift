import EventLoop
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One spool file as the loop and the writer thread share it: the descriptor, the bytes
/// handed over and not yet written, and the first write error. The writer closes the
/// descriptor when the loop lets the file go, after the writes queued before; a descriptor
/// given to libevent (`Spool.takeDescriptor`) is never closed here.
final class SpoolFile: Sendable {
    let descriptor: Int32
    /// Bytes handed to the writer and not yet on disk (or dropped after an error).
    let inFlight = Atomic<Int>(0)
    /// The first write error (`errno`), e.g. ENOSPC; 0 while none.
    let error = Atomic<Int32>(0)
    /// The loop let the file go: its queued writes are skipped.
    let abandoned = Atomic<Bool>(false)

    init(descriptor: Int32) {
        self.descriptor = descriptor
    }
}

/// A worker's spool writer: one thread (`fg-spool-N`, a `SerialJobThread`) that does the
/// spools' write(2)s and close(2)s in the order the loop queued them, so a slow or full disk
/// stalls no loop. The loop only queues and hears of progress through `progressed`, called on
/// the writer thread when a file's bytes in flight fall to `lowMark` or to zero, or a write
/// fails.
///
/// The thread starts with the first job and ends in `finish()`, after what is queued; a job
/// queued when no thread runs (it could not be started, or the worker finished) runs on the
/// caller's thread.
final class SpoolWriter: Sendable {
    enum Job {
        /// Appends `block` to the file.
        case write(SpoolFile, [UInt8])
        /// Closes the file's descriptor.
        case close(SpoolFile)
    }

    /// A file with this many bytes in flight is backed up (its exchange pauses the client).
    static let highMark = 1 << 20
    /// A backed-up file signals when its bytes in flight fall to this.
    static let lowMark = 512 << 10

    private let progressed: @Sendable () -> Void
    private let thread: SerialJobThread
    /// The test hook, until the first job takes it.
    private let beforeFirstBlock: Mutex<(@Sendable () -> Void)?>

    /// - Parameters:
    ///   - name: the thread's name.
    ///   - beforeFirstBlock: a test hook the thread calls once, before its first job (it may
    ///     block the thread; see `FORMGATE_TEST_SPOOL_GATE` in the README).
    ///   - progressed: wakes the loop (thread-safe, as `Notifier.notify` is).
    init(
        name: String, beforeFirstBlock: (@Sendable () -> Void)? = nil,
        progressed: @escaping @Sendable () -> Void
    ) {
        thread = SerialJobThread(name: name)
        self.beforeFirstBlock = Mutex(beforeFirstBlock)
        self.progressed = progressed
    }

    /// Queues `block` for `file` and returns at once.
    func write(_ block: [UInt8], to file: SpoolFile) {
        file.inFlight.add(block.count, ordering: .relaxed)
        submit(.write(file, block))
    }

    /// Closes `file` once the writes queued before are done (those are skipped).
    func close(_ file: SpoolFile) {
        file.abandoned.store(true, ordering: .relaxed)
        submit(.close(file))
    }

    /// Stops the thread after the jobs queued so far and waits for it (the loop has ended).
    func finish() {
        thread.finish()
    }

    private func submit(_ job: Job) {
        let hadThread = thread.failure == nil
        let gate = beforeFirstBlock.withLock { hook in
            defer { hook = nil }
            return hook
        }
        if let gate { thread.submit(gate) }
        thread.submit { [self] in perform(job) }
        if hadThread, let failure = thread.failure {
            ErrorLog.shared.write(.warn, "\(failure.message): spool writes run on the loop")
        }
    }

    private func perform(_ job: Job) {
        switch job {
        case .write(let file, let block):
            var failed = false
            if !file.abandoned.load(ordering: .relaxed), file.error.load(ordering: .relaxed) == 0 {
                let error = block.withUnsafeBytes { Self.writeAll($0, to: file.descriptor) }
                if error != 0 {
                    file.error.store(error, ordering: .relaxed)
                    failed = true
                }
            }
            // The subtraction publishes the error to the loop, which reads the count first.
            let before = file.inFlight.subtract(block.count, ordering: .acquiringAndReleasing).oldValue
            let after = before - block.count
            if failed || after == 0 || (before > Self.lowMark && after <= Self.lowMark) { progressed() }
        case .close(let file):
            _ = Glibc.close(file.descriptor)
        }
    }

    /// Writes all of `bytes` to `descriptor`; returns 0 or the first error's `errno`.
    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32 {
        var offset = 0
        while offset < bytes.count {
            let result = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                return errno
            }
            offset += result
        }
        return 0
    }
}
