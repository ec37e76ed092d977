#if canImport(Glibc)
    import Glibc
#endif

/// Counts one worker's failed `accept()` calls and decides when to say so: the first failure
/// is logged at once, later ones are counted and written as one line per `interval` naming
/// how many there were. A process out of descriptors thus writes a few lines a minute, not
/// one per attempt (the listener pauses after each failure, see `Listener`).
///
/// Pure: time comes in as `now` (milliseconds on any monotonic clock).
struct AcceptErrorTally {
    /// Why `accept()` failed, as the `reason` label of `formgate_accept_errors_total`.
    enum Reason: String, CaseIterable, Sendable {
        /// EMFILE (the process's RLIMIT_NOFILE) or ENFILE (the system's file table).
        case descriptors
        /// ENOBUFS or ENOMEM.
        case memory
        /// Anything else libevent does not retry itself.
        case other

        init(errno error: Int32) {
            switch error {
            case EMFILE, ENFILE: self = .descriptors
            case ENOBUFS, ENOMEM: self = .memory
            default: self = .other
            }
        }
    }

    /// The shortest time between two lines.
    let interval: Int64
    /// The listener's pause after each failure, as the lines state it.
    let pause: Int64
    /// Failures not written yet, by reason.
    private var unreported: [Reason: Int] = [:]
    /// The `errno` of the latest failure not written yet.
    private var lastError: Int32 = 0
    /// When the last line was written (nil: never).
    private var lastLine: Int64?

    init(interval: Int64 = 10_000, pause: Int64) {
        self.interval = interval
        self.pause = pause
    }

    /// Counts a failure at `now`; returns the line to write now, or nil when it waits for
    /// `reportDue` (an interval after the previous line).
    mutating func failed(errno error: Int32, now: Int64) -> String? {
        unreported[Reason(errno: error), default: 0] += 1
        lastError = error
        return report(now: now)
    }

    /// When the counted failures are due to be written (nil: none are waiting).
    var reportDue: Int64? {
        guard !unreported.isEmpty else { return nil }
        return lastLine.map { $0 + interval } ?? 0
    }

    /// The line for the failures counted since the previous one, once an interval has passed
    /// since it (nil: nothing to write yet).
    mutating func report(now: Int64) -> String? {
        guard let due = reportDue, now >= due else { return nil }
        let total = unreported.values.reduce(0, +)
        let reasons = Reason.allCases.compactMap { reason in
            unreported[reason].map { "\(reason.rawValue) \($0)" }
        }
        let span = lastLine.map { " in the last \(Self.seconds(now - $0)) s" } ?? ""
        let line =
            "accept() failed \(total) time\(total == 1 ? "" : "s")\(span) (\(reasons.joined(separator: ", "))), "
            + "latest: \(String(cString: strerror(lastError))); accepting pauses "
            + "\(Self.seconds(pause)) s after each failure"
        unreported.removeAll()
        lastLine = now
        return line
    }

    private static func seconds(_ milliseconds: Int64) -> String {
        let tenths = (milliseconds + 50) / 100
        return "\(tenths / 10).\(tenths % 10)"
    }
}
