import EventLoop
import HTTPCore
import ProxyCore

#if canImport(Glibc)
    import Glibc
#endif

/// One JSON line per request (DESIGN.md's access log fields), to stdout, stderr or a file,
/// written by a `LogWriter` thread. Secrets never appear: no header values are logged.
final class AccessLog: @unchecked Sendable {
    let writer: LogWriter

    init(destination: String) {
        writer = LogWriter(destination: destination)
    }

    func write(_ record: AccessRecord, client: SocketAddress) {
        guard writer.isEnabled else { return }
        guard let requestID = record.requestID else {
            return emit([
                ("time", jsonString(utcTimestamp(milliseconds: true))), ("client", jsonString(client.host)),
                ("status", "\(record.status)"),
                ("error", jsonString(record.error ?? "")),
            ])
        }
        var fields: [(String, String)] = [
            ("time", jsonString(utcTimestamp(milliseconds: true))),
            ("id", jsonString(requestID)),
            ("client", jsonString(client.host)),
            ("method", jsonString(record.method ?? "")),
            ("path", jsonString(record.path ?? "")),
            ("status", "\(record.status)"),
            ("upstream_status", record.upstreamStatus.map { "\($0)" } ?? "null"),
            ("bytes_in", "\(record.bytesIn)"),
            ("bytes_out", "\(record.bytesOut)"),
            ("duration_ms", "\(record.finishedAt - record.startedAt)"),
            ("upstream_ms", record.upstreamMilliseconds.map { "\($0)" } ?? "null"),
            ("route", record.route.map { jsonString($0) } ?? "null"),
        ]
        if let multipart = record.multipart {
            fields.append(
                ("anomalies", "[" + multipart.anomalies.map(jsonString).joined(separator: ",") + "]"))
            let parts = multipart.parts.map { part in
                var members = ["\"name\":\(jsonString(part.name))"]
                members.append("\"filename\":" + (part.filename.map(jsonString) ?? "null"))
                members.append("\"original_filename\":" + (part.originalFilename.map(jsonString) ?? "null"))
                members.append("\"declared_type\":" + (part.declaredType.map(jsonString) ?? "null"))
                members.append("\"sniffed_type\":" + (part.sniffedType.map(jsonString) ?? "null"))
                members.append("\"content_type\":" + (part.contentType.map(jsonString) ?? "null"))
                members.append("\"bytes\":\(part.bytes)")
                if part.dropped { members.append("\"dropped\":true") }
                for (algorithm, value) in part.digests {
                    members.append("\(jsonString(algorithm.rawValue)):\(jsonString(value))")
                }
                return "{" + members.joined(separator: ",") + "}"
            }
            fields.append(("parts", "[" + parts.joined(separator: ",") + "]"))
            fields.append(("injected", "[" + multipart.injected.map(jsonString).joined(separator: ",") + "]"))
        }
        fields.append(("error", record.error.map(jsonString) ?? "null"))
        emit(fields)
    }

    private func emit(_ fields: [(String, String)]) {
        writer.enqueue("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
    }
}
