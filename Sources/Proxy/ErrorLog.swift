#if canImport(Glibc)
    import Glibc
#endif

/// The human-readable error log on stderr: `TIME [level] formgate: message`, written by a
/// `LogWriter` thread so event loops never block on it.
public final class ErrorLog: Sendable {
    /// How serious a message is.
    public enum Level: String, Sendable {
        case info, warn, error
    }

    /// The process's error log.
    public static let shared = ErrorLog()

    private let writer = LogWriter(destination: "stderr")

    /// Writes one line.
    public func write(_ level: Level, _ message: String) {
        writer.enqueue("\(timestamp()) [\(level.rawValue)] formgate: \(message)")
    }

    /// Writes what is queued (before the process exits).
    public func flush() {
        writer.flushAndStop()
    }

    private func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T"
            + "\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec))Z"
    }
}
