import ProxyCore
import Synchronization
import Tracing

/// Counters, gauges and histograms for `/metrics` (Prometheus text format 0.0.4), shared by
/// every worker: each request adds to them once, when it ends.
final class Metrics: Sendable {
    struct Histogram {
        /// The request-scale buckets (seconds).
        static let standardBounds: [Double] = [
            0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
        ]
        /// The upper bounds of the buckets, in seconds.
        let bounds: [Double]
        var counts: [Int]
        var sum = 0.0
        var total = 0

        init(bounds: [Double] = Histogram.standardBounds) {
            self.bounds = bounds
            counts = [Int](repeating: 0, count: bounds.count + 1)
        }

        mutating func observe(_ seconds: Double) {
            let index = bounds.firstIndex { seconds <= $0 } ?? bounds.count
            counts[index] += 1
            sum += seconds
            total += 1
        }
    }

    /// A request counter's labels, kept as a route name and a status code (no key string).
    struct RequestKey: Hashable {
        var route: String
        var status: Int
    }

    /// `formgate_auth_total`'s labels.
    struct AuthKey: Hashable {
        var route: String
        var result: AuthResult
        var reason: String
    }

    /// `formgate_rate_limited_total`'s labels.
    struct RateLimitKey: Hashable {
        var route: String
        var limit: String
    }

    /// What one finished request adds, gathered by the caller before the lock.
    struct RequestRecord {
        var route: String
        var status: Int
        /// Whether the request came on an HTTP/2 stream.
        var http2 = false
        var bytesIn: Int64 = 0
        var bytesOut: Int64 = 0
        var parts = 0
        var files = 0
        var renamed = 0
        var dropped = 0
        var injected = 0
        var sniffOverrides = 0
        var typeRejected = false
        var limit: String?
        var upstreamError: String?
        var anomalies: [String] = []
        /// The parts' scan results.
        var scans = ScanTally()
        /// What `strip_metadata` removed, one entry per kind per file.
        var stripped: [String] = []
        /// What the request-level checks decided (auth results, rate limits).
        var tallies = CheckTallies()
        var seconds: Double
        var upstreamSeconds: Double?
    }

    struct State {
        /// Requests by route (`none` when no exchange started) and status.
        var requests: [RequestKey: Int] = [:]
        /// Requests by client protocol: HTTP/1.x and HTTP/2.
        var http1Requests = 0
        var http2Requests = 0
        var bytesIn = 0
        var bytesOut = 0
        var parts = 0
        var files = 0
        var ruleActions: [String: Int] = [:]
        var limitRejections: [String: Int] = [:]
        var anomalies: [String: Int] = [:]
        var upstreamErrors: [String: Int] = [:]
        /// `formgate_auth_total` by route, result and reason.
        var auth: [AuthKey: Int] = [:]
        /// `formgate_rate_limited_total` by route and limit.
        var rateLimited: [RateLimitKey: Int] = [:]
        /// Failed `accept()` calls by reason (`AcceptErrorTally.Reason`), zero until one fails.
        var acceptErrors = Dictionary(
            uniqueKeysWithValues: AcceptErrorTally.Reason.allCases.map { ($0.rawValue, 0) })
        /// Failed TLS handshakes by reason (`TLSHandshake.failureReasons`), zero until one fails.
        var tlsHandshakeFailures = Dictionary(
            uniqueKeysWithValues: TLSHandshake.failureReasons.map { ($0, 0) })
        var requestDuration = Histogram()
        var upstreamDuration = Histogram()
        var activeConnections = 0
        var uploadsInFlight = 0
        var reloads = 0
        var reloadFailures = 0
        /// The resumable uploads' series (`Metrics+Tus`).
        var tusEvents: [TusKey: Int] = [:]
        var tusBytes: [String: Int64] = [:]
        var tusActive: [String: Int] = [:]
        /// The inspection series (`Metrics+Inspection`).
        var scans: [InspectionKey: Int] = [:]
        var stripped: [InspectionKey: Int] = [:]
        var scanDuration = Histogram()
        /// The shared-state series (`Metrics+Redis`), by worker for `redisUp`.
        var redisCommands: [String: Int] = [:]
        var redisDuration = Histogram(bounds: Metrics.redisBounds)
        var redisUp: [Int: Bool] = [:]
        var redisUndecided: [String: Int] = [:]
    }

    private let state = Mutex(State())
    /// Reads the access log's dropped-line count at scrape time.
    nonisolated(unsafe) var droppedLogLines: @Sendable () -> Int = { 0 }
    /// The span exporter's counters, when tracing runs.
    nonisolated(unsafe) var traceCounters: @Sendable () -> ExportCounters? = { nil }

    func update(_ body: (inout State) -> Void) {
        state.withLock { body(&$0) }
    }

    /// A request ended: every counter it moves, under one lock, without building a key
    /// string (the in-flight gauge goes down by one).
    func requestEnded(_ record: RequestRecord) {
        state.withLock { state in
            state.uploadsInFlight -= 1
            state.requests[RequestKey(route: record.route, status: record.status), default: 0] += 1
            if record.http2 { state.http2Requests += 1 } else { state.http1Requests += 1 }
            state.bytesIn += Int(record.bytesIn)
            state.bytesOut += Int(record.bytesOut)
            state.parts += record.parts
            state.files += record.files
            if record.renamed > 0 { state.ruleActions["renamed", default: 0] += record.renamed }
            if record.dropped > 0 { state.ruleActions["dropped", default: 0] += record.dropped }
            if record.injected > 0 { state.ruleActions["injected", default: 0] += record.injected }
            if record.sniffOverrides > 0 {
                state.ruleActions["sniff_override", default: 0] += record.sniffOverrides
            }
            if record.typeRejected { state.ruleActions["type_rejected", default: 0] += 1 }
            if let limit = record.limit { state.limitRejections[limit, default: 0] += 1 }
            if let kind = record.upstreamError { state.upstreamErrors[kind, default: 0] += 1 }
            for flag in record.anomalies { state.anomalies[flag, default: 0] += 1 }
            record.scans.add(route: record.route, to: &state.scans)
            for kind in record.stripped {
                state.stripped[InspectionKey(route: record.route, value: kind), default: 0] += 1
            }
            Self.count(record.tallies.first, route: record.route, in: &state)
            Self.count(record.tallies.second, route: record.route, in: &state)
            state.requestDuration.observe(record.seconds)
            if let upstream = record.upstreamSeconds { state.upstreamDuration.observe(upstream) }
        }
    }

    /// Counts one request check's decision.
    private static func count(_ tally: CheckTally?, route: String, in state: inout State) {
        switch tally {
        case .auth(let result, let reason)?:
            state.auth[AuthKey(route: route, result: result, reason: reason), default: 0] += 1
        case .rateLimited(let limit)?:
            state.rateLimited[RateLimitKey(route: route, limit: limit), default: 0] += 1
        case nil:
            break
        }
    }

    /// Requests by route and status, sorted for rendering.
    private static func requestCounts(_ state: State) -> [(route: String, status: String, count: Int)] {
        state.requests.map { (route: $0.key.route, status: String($0.key.status), count: $0.value) }
            .sorted { ($0.route, $0.status) < ($1.route, $1.status) }
    }

    /// The Prometheus text exposition.
    func render() -> String {
        let snapshot = state.withLock { $0 }
        var out = ""
        Self.family("formgate_requests_total", "counter", "Requests by route and status.", into: &out)
        for (route, status, count) in Self.requestCounts(snapshot) {
            out += "formgate_requests_total\(Self.labels([("route", route), ("status", status)])) \(count)\n"
        }
        Self.family(
            "formgate_requests_by_protocol_total", "counter", "Requests by the client's protocol.", into: &out
        )
        out += "formgate_requests_by_protocol_total{protocol=\"http/1.1\"} \(snapshot.http1Requests)\n"
        out += "formgate_requests_by_protocol_total{protocol=\"h2\"} \(snapshot.http2Requests)\n"
        Self.family(
            "formgate_received_bytes_total", "counter", "Request body bytes read from clients.", into: &out)
        out += "formgate_received_bytes_total \(snapshot.bytesIn)\n"
        Self.family("formgate_sent_bytes_total", "counter", "Response bytes sent to clients.", into: &out)
        out += "formgate_sent_bytes_total \(snapshot.bytesOut)\n"
        Self.family("formgate_parts_total", "counter", "Multipart parts seen.", into: &out)
        out += "formgate_parts_total \(snapshot.parts)\n"
        Self.family(
            "formgate_files_total", "counter", "File parts whose head was read, refused ones included.",
            into: &out)
        out += "formgate_files_total \(snapshot.files)\n"
        Self.renderLabelledCounters(snapshot, into: &out)
        Self.renderCheckCounters(snapshot, into: &out)
        Self.renderHistograms(snapshot, into: &out)
        Self.renderTus(snapshot, into: &out)
        Self.renderInspection(snapshot, into: &out)
        Self.renderRedis(snapshot, into: &out)
        Self.renderTracing(traceCounters(), into: &out)
        Self.family("formgate_active_connections", "gauge", "Open client connections.", into: &out)
        out += "formgate_active_connections \(snapshot.activeConnections)\n"
        Self.family("formgate_uploads_in_flight", "gauge", "Requests being forwarded.", into: &out)
        out += "formgate_uploads_in_flight \(snapshot.uploadsInFlight)\n"
        Self.family(
            "formgate_log_dropped_lines_total", "counter",
            "Access-log lines dropped because the log could not keep up.", into: &out)
        out += "formgate_log_dropped_lines_total \(droppedLogLines())\n"
        Self.family(
            "formgate_config_reloads_total", "counter", "Configuration reloads, by result.", into: &out)
        out += "formgate_config_reloads_total{result=\"ok\"} \(snapshot.reloads)\n"
        out += "formgate_config_reloads_total{result=\"refused\"} \(snapshot.reloadFailures)\n"
        return out
    }

    /// `formgate_auth_total` and `formgate_rate_limited_total` (no series before the first).
    private static func renderCheckCounters(_ snapshot: State, into out: inout String) {
        family(
            "formgate_auth_total", "counter", "Authentication decisions by route, result and reason.",
            into: &out)
        let auth = snapshot.auth.sorted {
            ($0.key.route, $0.key.result.rawValue, $0.key.reason) < (
                $1.key.route, $1.key.result.rawValue, $1.key.reason
            )
        }
        for (key, count) in auth {
            out +=
                "formgate_auth_total\(labels([("route", key.route), ("result", key.result.rawValue), ("reason", key.reason)])) \(count)\n"
        }
        family(
            "formgate_rate_limited_total", "counter", "Requests refused by a rate limit, by route and limit.",
            into: &out)
        for (key, count) in snapshot.rateLimited.sorted(by: {
            ($0.key.route, $0.key.limit) < ($1.key.route, $1.key.limit)
        }) {
            out +=
                "formgate_rate_limited_total\(labels([("route", key.route), ("limit", key.limit)])) \(count)\n"
        }
    }

    /// The counters with one label: rule actions, limits, anomalies, upstream and accept errors.
    private static func renderLabelledCounters(_ snapshot: State, into out: inout String) {
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
            (
                "formgate_tls_handshake_failures_total",
                "TLS handshakes that failed or timed out, by reason (closed, version, server_name, other, timeout).",
                snapshot.tlsHandshakeFailures, "reason"
            ),
        ] {
            family(name, "counter", help, into: &out)
            for (key, count) in values.sorted(by: { $0.key < $1.key }) {
                out += "\(name)\(labels([(label, key)])) \(count)\n"
            }
        }
    }

    /// The request and upstream duration histograms.
    private static func renderHistograms(_ snapshot: State, into out: inout String) {
        for (name, help, histogram) in [
            (
                "formgate_request_duration_seconds", "Time from request head to the end of the response.",
                snapshot.requestDuration
            ),
            (
                "formgate_upstream_duration_seconds", "Time from connecting upstream to its response head.",
                snapshot.upstreamDuration
            ),
            (
                "formgate_scan_duration_seconds", "Time from a scanned file's end to the scanner's answer.",
                snapshot.scanDuration
            ),
        ] {
            renderHistogram(name, help, histogram, into: &out)
        }
    }

    static func renderHistogram(
        _ name: String, _ help: String, _ histogram: Histogram, into out: inout String
    ) {
        family(name, "histogram", help, into: &out)
        var cumulative = 0
        for (index, bound) in histogram.bounds.enumerated() {
            cumulative += histogram.counts[index]
            out += "\(name)_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        out +=
            "\(name)_bucket{le=\"+Inf\"} \(histogram.total)\n\(name)_sum \(histogram.sum)\n\(name)_count \(histogram.total)\n"
    }

    static func family(_ name: String, _ type: String, _ help: String, into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    static func labels(_ pairs: [(String, String)]) -> String {
        pairs.isEmpty ? "" : "{" + pairs.map { "\($0.0)=\"\(escape($0.1))\"" }.joined(separator: ",") + "}"
    }

    private static func escape(_ value: String) -> String {
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
