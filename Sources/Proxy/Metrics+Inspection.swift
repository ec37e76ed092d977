/// The inspection series: `formgate_scan_total{route,result}`, the scan-latency histogram
/// `formgate_scan_duration_seconds` (from a file's end to clamd's answer) and
/// `formgate_stripped_total{route,kind}` (what `strip_metadata` removed, per file).
extension Metrics {
    /// `formgate_scan_total`'s and `formgate_stripped_total`'s labels.
    struct InspectionKey: Hashable {
        var route: String
        var value: String
    }

    /// The scan results of one request's parts (the signature is not a label: it is in the log).
    struct ScanTally {
        var clean = 0
        var infected = 0
        var error = 0
        var skipped = 0

        mutating func count(_ logValue: String) {
            switch logValue {
            case "clean": clean += 1
            case "error": error += 1
            case "skipped": skipped += 1
            default: infected += 1
            }
        }

        func add(route: String, to counts: inout [InspectionKey: Int]) {
            for (result, count) in [
                ("clean", clean), ("infected", infected), ("error", error), ("skipped", skipped),
            ]
            where count > 0 {
                counts[InspectionKey(route: route, value: result), default: 0] += count
            }
        }
    }

    static func renderInspection(_ snapshot: State, into out: inout String) {
        family("formgate_scan_total", "counter", "Scanned files by route and result.", into: &out)
        for (key, count) in snapshot.scans.sorted(by: {
            ($0.key.route, $0.key.value) < ($1.key.route, $1.key.value)
        }) {
            out += "formgate_scan_total\(labels([("route", key.route), ("result", key.value)])) \(count)\n"
        }
        family(
            "formgate_stripped_total", "counter", "Metadata kinds stripped from files, by route and kind.",
            into: &out)
        for (key, count) in snapshot.stripped.sorted(by: {
            ($0.key.route, $0.key.value) < ($1.key.route, $1.key.value)
        }) {
            out += "formgate_stripped_total\(labels([("route", key.route), ("kind", key.value)])) \(count)\n"
        }
    }
}
