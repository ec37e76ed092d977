import Config
import EventLoop
import HTTP1
import HTTPCore

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

    func write(exchange: Exchange, status: Int, client: SocketAddress, now: Int64) {
        guard writer.isEnabled else { return }
        var fields: [(String, String)] = [
            ("time", jsonString(utcTimestamp(milliseconds: true))),
            ("id", jsonString(exchange.requestID)),
            ("client", jsonString(client.host)),
            ("method", jsonString(exchange.head.method)),
            ("path", jsonString(String(exchange.head.path))),
            ("status", "\(status)"),
            ("upstream_status", exchange.upstreamStatus.map { "\($0)" } ?? "null"),
            ("bytes_in", "\(exchange.bytesIn)"),
            ("bytes_out", "\(exchange.bytesOut)"),
            ("duration_ms", "\(now - exchange.startedAt)"),
            ("upstream_ms", exchange.upstreamMilliseconds.map { "\($0)" } ?? "null"),
            ("route", exchange.route.map { jsonString($0.name) } ?? "null"),
        ]
        if case .multipart(let pipeline) = exchange.body {
            fields.append(
                (
                    "anomalies",
                    "[" + pipeline.parser.anomalies.names.map(jsonString).joined(separator: ",") + "]"
                ))
            let parts = pipeline.rewriter.records.map { part in
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
            fields.append(
                ("injected", "[" + pipeline.rewriter.injected.map(jsonString).joined(separator: ",") + "]"))
        }
        fields.append(("error", exchange.error.map(jsonString) ?? "null"))
        emit(fields)
    }

    func writeEarly(status: Int, client: SocketAddress, error: String) {
        guard writer.isEnabled else { return }
        emit([
            ("time", jsonString(utcTimestamp(milliseconds: true))), ("client", jsonString(client.host)),
            ("status", "\(status)"),
            ("error", jsonString(error)),
        ])
    }

    private func emit(_ fields: [(String, String)]) {
        writer.enqueue("{" + fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}")
    }
}
