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
        writer.enqueue("\(utcTimestamp(milliseconds: false)) [\(level.rawValue)] formgate: \(message)")
    }

    /// Writes what is queued (before the process exits).
    public func flush() {
        writer.flushAndStop()
    }
}
