import Synchronization

/// Counters, gauges and histograms for `/metrics` (Prometheus text format 0.0.4), shared by
/// every worker: each request adds to them once, when it ends.
final class Metrics: Sendable {
    struct Histogram {
        static let bounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
        var counts = [Int](repeating: 0, count: bounds.count + 1)
        var sum = 0.0
        var total = 0

        mutating func observe(_ seconds: Double) {
            let index = Self.bounds.firstIndex { seconds <= $0 } ?? Self.bounds.count
            counts[index] += 1
            sum += seconds
            total += 1
        }
    }

    struct State {
        var requests: [String: Int] = [:]
        var bytesIn = 0
        var bytesOut = 0
        var parts = 0
        var files = 0
        var ruleActions: [String: Int] = [:]
        var limitRejections: [String: Int] = [:]
        var anomalies: [String: Int] = [:]
        var upstreamErrors: [String: Int] = [:]
        /// Failed `accept()` calls by reason (`AcceptErrorTally.Reason`), zero until one fails.
        var acceptErrors = Dictionary(
            uniqueKeysWithValues: AcceptErrorTally.Reason.allCases.map { ($0.rawValue, 0) })
        var requestDuration = Histogram()
        var upstreamDuration = Histogram()
        var activeConnections = 0
        var uploadsInFlight = 0
        var reloads = 0
        var reloadFailures = 0
    }

    private let state = Mutex(State())
    /// Reads the access log's dropped-line count at scrape time.
    nonisolated(unsafe) var droppedLogLines: @Sendable () -> Int = { 0 }

    func update(_ body: (inout State) -> Void) {
        state.withLock { body(&$0) }
    }

    /// The Prometheus text exposition.
    func render() -> String {
        let snapshot = state.withLock { $0 }
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
        }
        func labels(_ pairs: [(String, String)]) -> String {
            pairs.isEmpty
                ? "" : "{" + pairs.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",") + "}"
        }
        family("formgate_requests_total", "counter", "Requests by route and status.")
        for (key, count) in snapshot.requests.sorted(by: { $0.key < $1.key }) {
            let parts = key.split(separator: "\u{1F}", omittingEmptySubsequences: false).map(String.init)
            out += "formgate_requests_total\(labels([("route", parts[0]), ("status", parts[1])])) \(count)\n"
        }
        family("formgate_received_bytes_total", "counter", "Request body bytes read from clients.")
        out += "formgate_received_bytes_total \(snapshot.bytesIn)\n"
        family("formgate_sent_bytes_total", "counter", "Response bytes sent to clients.")
        out += "formgate_sent_bytes_total \(snapshot.bytesOut)\n"
        family("formgate_parts_total", "counter", "Multipart parts seen.")
        out += "formgate_parts_total \(snapshot.parts)\n"
        family("formgate_files_total", "counter", "File parts whose head was read, refused ones included.")
        out += "formgate_files_total \(snapshot.files)\n"
        for (name, help, values, label) in [
            ("formgate_rule_actions_total", "Rule actions by kind.", snapshot.ruleActions, "action"),
            (
                "formgate_limit_rejections_total", "Requests refused by a limit.", snapshot.limitRejections,
                "limit"
            ),
            (
                "formgate_anomalies_total", "Multipart anomalies repaired, by flag.", snapshot.anomalies,
                "flag"
            ),
            ("formgate_upstream_errors_total", "Upstream failures by kind.", snapshot.upstreamErrors, "kind"),
            (
                "formgate_accept_errors_total",
                "Failed accept() calls by reason (descriptors, memory, other).",
                snapshot.acceptErrors, "reason"
            ),
        ] {
            family(name, "counter", help)
            for (key, count) in values.sorted(by: { $0.key < $1.key }) {
                out += "\(name)\(labels([(label, key)])) \(count)\n"
            }
        }
        for (name, help, histogram) in [
            (
                "formgate_request_duration_seconds", "Time from request head to the end of the response.",
                snapshot.requestDuration
            ),
            (
                "formgate_upstream_duration_seconds", "Time from connecting upstream to its response head.",
                snapshot.upstreamDuration
            ),
        ] {
            family(name, "histogram", help)
            var cumulative = 0
            for (index, bound) in Histogram.bounds.enumerated() {
                cumulative += histogram.counts[index]
                out += "\(name)_bucket{le=\"\(bound)\"} \(cumulative)\n"
            }
            out +=
                "\(name)_bucket{le=\"+Inf\"} \(histogram.total)\n\(name)_sum \(histogram.sum)\n\(name)_count \(histogram.total)\n"
        }
        family("formgate_active_connections", "gauge", "Open client connections.")
        out += "formgate_active_connections \(snapshot.activeConnections)\n"
        family("formgate_uploads_in_flight", "gauge", "Requests being forwarded.")
        out += "formgate_uploads_in_flight \(snapshot.uploadsInFlight)\n"
        family(
            "formgate_log_dropped_lines_total", "counter",
            "Access-log lines dropped because the log could not keep up.")
        out += "formgate_log_dropped_lines_total \(droppedLogLines())\n"
        family("formgate_config_reloads_total", "counter", "Configuration reloads, by result.")
        out += "formgate_config_reloads_total{result=\"ok\"} \(snapshot.reloads)\n"
        out += "formgate_config_reloads_total{result=\"refused\"} \(snapshot.reloadFailures)\n"
        return out
    }

    private func escape(_ value: String) -> String {
        value.replacingAll("\\", with: "\\\\").replacingAll("\"", with: "\\\"").replacingAll(
            "\n", with: "\\n")
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for character in self { if character == target { out += replacement } else { out.append(character) } }
        return out
    }
}
