/// The resumable uploads' series: `formgate_tus_uploads_total{route,event}`,
/// `formgate_tus_bytes_total{route}` and `formgate_tus_active{route}` (PATCHes writing now).
extension Metrics {
    /// Counts a tus event of `route` and the upload bytes it committed.
    func tus(route: String, event: String, bytes: Int64) {
        update { state in
            state.tusEvents[TusKey(route: route, event: event), default: 0] += 1
            if bytes > 0 { state.tusBytes[route, default: 0] += bytes }
        }
    }

    /// A PATCH of `route` started (`delta` 1) or stopped (-1) writing an upload.
    func tusWriters(route: String, delta: Int) {
        update { $0.tusActive[route, default: 0] += delta }
    }

    /// `formgate_tus_uploads_total{route,event}`'s labels.
    struct TusKey: Hashable {
        var route: String
        var event: String
    }

    static func renderTus(_ snapshot: State, into out: inout String) {
        family(
            "formgate_tus_uploads_total", "counter", "Resumable upload events by route and event.", into: &out
        )
        for (key, count) in snapshot.tusEvents.sorted(by: {
            ($0.key.route, $0.key.event) < ($1.key.route, $1.key.event)
        }) {
            out +=
                "formgate_tus_uploads_total\(labels([("route", key.route), ("event", key.event)])) \(count)\n"
        }
        family(
            "formgate_tus_bytes_total", "counter", "Resumable upload bytes committed, by route.", into: &out)
        for (route, bytes) in snapshot.tusBytes.sorted(by: { $0.key < $1.key }) {
            out += "formgate_tus_bytes_total\(labels([("route", route)])) \(bytes)\n"
        }
        family("formgate_tus_active", "gauge", "Resumable upload requests writing now, by route.", into: &out)
        for (route, count) in snapshot.tusActive.sorted(by: { $0.key < $1.key }) {
            out += "formgate_tus_active\(labels([("route", route)])) \(count)\n"
        }
    }
}
