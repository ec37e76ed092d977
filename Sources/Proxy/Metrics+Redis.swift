/// The shared-state series: `formgate_redis_commands_total{result}` (`ok`, `error` for an
/// error reply, `timeout`, `unavailable`, `protocol_error`), the command latency histogram
/// `formgate_redis_command_duration_seconds` (write to reply, answered commands only),
/// `formgate_redis_up` (1 when every worker's connections are up) and
/// `formgate_redis_errors_total{on_error}` (shared rate-limit decisions Redis did not make,
/// by what decided them instead: `local`, `allow`, `deny`).
extension Metrics {
    /// Latency buckets for Redis: a command on a healthy LAN answers in well under a millisecond.
    static let redisBounds: [Double] = [
        0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1,
    ]

    static func renderRedis(_ snapshot: State, into out: inout String) {
        guard !snapshot.redisUp.isEmpty else { return }
        family("formgate_redis_up", "gauge", "Whether every worker's Redis connections are up.", into: &out)
        out += "formgate_redis_up \(snapshot.redisUp.values.allSatisfy { $0 } ? 1 : 0)\n"
        family("formgate_redis_commands_total", "counter", "Redis commands by result.", into: &out)
        for result in ["ok", "error", "timeout", "unavailable", "protocol_error"] {
            out +=
                "formgate_redis_commands_total\(labels([("result", result)])) \(snapshot.redisCommands[result] ?? 0)\n"
        }
        family(
            "formgate_redis_errors_total", "counter",
            "Shared rate-limit decisions Redis did not make, by what decided instead (on_error).", into: &out)
        for policy in ["local", "allow", "deny"] {
            out +=
                "formgate_redis_errors_total\(labels([("on_error", policy)])) \(snapshot.redisUndecided[policy] ?? 0)\n"
        }
        renderHistogram(
            "formgate_redis_command_duration_seconds", "Time from writing a Redis command to its reply.",
            snapshot.redisDuration, into: &out)
    }
}
