import EventLoop
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writes log lines on its own thread so a slow disk or a full pipe never stalls an event
/// loop: loops enqueue into a bounded buffer (4 MiB) and a line that does not fit is dropped
/// and counted. `reopen()` (SIGUSR1) reopens a file destination, for logrotate. When the
/// thread cannot be started, the reason is written once to stderr and every line is dropped
/// and counted.
final class LogWriter: @unchecked Sendable {
    private struct Queue {
        var lines: [[UInt8]] = []
        var bytes = 0
        var dropped = 0
        var reopen = false
        var stopping = false
    }

    static let capacity = 4 << 20
    private let queue = Mutex(Queue())
    private let path: String?
    private var descriptor: Int32
    private let wakeup: UnsafeMutablePointer<sem_t>
    private var thread: EventLoopThread?

    /// `stdout`, `stderr`, `off` or a file path (opened for appending, created 0644).
    init(destination: String) {
        switch destination {
        case "off":
            descriptor = -1
            path = nil
        case "stdout":
            descriptor = 1
            path = nil
        case "stderr":
            descriptor = 2
            path = nil
        default:
            path = destination
            descriptor = open(destination, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        }
        wakeup = .allocate(capacity: 1)
        guard descriptor >= 0 || path != nil else { return }
        do throws(EventLoopError) {
            guard sem_init(wakeup, 0, 0) == 0 else { throw EventLoopError("sem_init failed") }
            thread = try EventLoopThread.start(name: "formgate-log") { [self] in run() }
        } catch {
            let note =
                "formgate: cannot start the log writer for \(destination) (\(error)); its lines are dropped\n"
            _ = Glibc.write(2, note, note.utf8.count)  // best effort: nowhere else to say it
        }
    }

    /// Whether lines are written at all.
    var isEnabled: Bool { (descriptor >= 0 || path != nil) && thread != nil }

    /// Queues one line (a trailing newline is added); never blocks on I/O.
    func enqueue(_ line: String) {
        enqueue(Array(line.utf8))
    }

    /// Queues one line given as bytes (without its line break).
    func enqueue(_ line: [UInt8]) {
        guard descriptor >= 0 || path != nil else { return }
        guard thread != nil else {
            queue.withLock { $0.dropped += 1 }
            return
        }
        var bytes = line
        bytes.append(0x0A)
        let accepted = queue.withLock { queue -> Bool in
            guard queue.bytes + bytes.count <= Self.capacity else {
                queue.dropped += 1
                return false
            }
            queue.lines.append(bytes)
            queue.bytes += bytes.count
            return true
        }
        if accepted { wake() }
    }

    /// Lines dropped because the buffer was full.
    var dropped: Int { queue.withLock { $0.dropped } }

    /// Reopens the file (after logrotate moved it); lines queued before go to the old one.
    func reopen() {
        queue.withLock { $0.reopen = true }
        wake()
    }

    /// Writes what is queued and stops the thread.
    func flushAndStop() {
        guard let thread else { return }
        queue.withLock { $0.stopping = true }
        wake()
        thread.join()
    }

    /// Wakes the thread. sem_post fails only past SEM_VALUE_MAX pending posts, when the
    /// thread is awake anyway.
    private func wake() {
        guard thread != nil else { return }
        _ = sem_post(wakeup)
    }

    private func run() {
        while true {
            // sem_wait fails only with EINTR (a signal): the loop looks at the queue again.
            _ = sem_wait(wakeup)
            let (lines, reopen, stopping) = queue.withLock { queue in
                defer {
                    queue.lines.removeAll(keepingCapacity: true)
                    queue.bytes = 0
                    queue.reopen = false
                }
                return (queue.lines, queue.reopen, queue.stopping)
            }
            for line in lines { writeAll(line) }
            if reopen, let path {
                let fresh = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
                if fresh >= 0 {
                    if descriptor >= 0 { close(descriptor) }
                    descriptor = fresh
                }
            }
            if stopping { return }
        }
    }

    private func writeAll(_ bytes: [UInt8]) {
        guard descriptor >= 0 else { return }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.write(descriptor, $0.baseAddress, $0.count)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }
}

/// The current UTC time as ISO 8601 (`2026-11-30T22:59:00Z`, or `….123Z` with milliseconds),
/// for log lines.
func utcTimestamp(milliseconds: Bool) -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    var parts = tm()
    var seconds = now.tv_sec
    gmtime_r(&seconds, &parts)
    func pad(_ value: Int, _ width: Int = 2) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }
    let fraction = milliseconds ? "." + pad(now.tv_nsec / 1_000_000, 3) : ""
    return "\(parts.tm_year + 1900)-\(pad(Int(parts.tm_mon) + 1))-\(pad(Int(parts.tm_mday)))T"
        + "\(pad(Int(parts.tm_hour))):\(pad(Int(parts.tm_min))):\(pad(Int(parts.tm_sec)))\(fraction)Z"
}
