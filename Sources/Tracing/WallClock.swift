#if canImport(Glibc)
    import Glibc
#endif

/// The clocks spans and the exporter read: wall time for span times (OTLP wants Unix
/// nanoseconds) and the monotonic clock for deadlines (which must not jump with the wall).
public enum WallClock {
    /// Now, in nanoseconds since the Unix epoch (`CLOCK_REALTIME`; a vDSO read, no system call).
    public static func nowUnixNano() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return UInt64(max(0, now.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, now.tv_nsec))
    }

    /// Nanoseconds on `CLOCK_MONOTONIC`: for intervals and deadlines only.
    static func monotonicNano() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(max(0, now.tv_sec)) &* 1_000_000_000 &+ UInt64(max(0, now.tv_nsec))
    }

    /// `milliseconds` in nanoseconds, held to 0…10 days (so deadlines never overflow).
    static func nanoseconds(milliseconds: Int64) -> UInt64 {
        UInt64(min(max(0, milliseconds), 864_000_000)) * 1_000_000
    }
}
