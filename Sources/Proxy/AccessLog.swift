import Config
import EventLoop
import HTTP1
import HTTPCore
import UploadRules

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

    /// Writes the exchange's line, built once into bytes (`JSONLine`): no `String` per value.
    func write(exchange: Exchange, status: Int, client: SocketAddress, now: Int64) {
        guard writer.isEnabled else { return }
        var line = JSONLine()
        line.key("time")
        line.timestamp(unixMilliseconds: wallClockMilliseconds())
        line.key("id")
        line.string(exchange.requestID)
        line.key("client")
        line.string(client.host)
        line.key("method")
        line.string(exchange.head.method)
        line.key("path")
        line.string(exchange.head.path)
        line.key("status")
        line.integer(status)
        line.key("upstream_status")
        line.integer(exchange.upstreamStatus)
        line.key("bytes_in")
        line.integer(exchange.bytesIn)
        line.key("bytes_out")
        line.integer(exchange.bytesOut)
        line.key("duration_ms")
        line.integer(now - exchange.startedAt)
        line.key("upstream_ms")
        line.integer(exchange.upstreamMilliseconds)
        line.key("route")
        line.string(exchange.route?.name)
        if case .multipart(let pipeline) = exchange.body {
            line.key("anomalies")
            line.beginArray()
            for name in pipeline.parser.anomalies.names { line.string(name) }
            line.endArray()
            line.key("parts")
            line.beginArray()
            for part in pipeline.rewriter.records { Self.write(part, to: &line) }
            line.endArray()
            line.key("injected")
            line.beginArray()
            for name in pipeline.rewriter.injected { line.string(name) }
            line.endArray()
        }
        line.key("error")
        line.string(exchange.error)
        emit(&line)
    }

    private static func write(_ part: RulePipeline<BodySink>.PartRecord, to line: inout JSONLine) {
        line.beginObject()
        line.key("name")
        line.string(part.name)
        line.key("filename")
        line.string(part.filename)
        line.key("original_filename")
        line.string(part.originalFilename)
        line.key("declared_type")
        line.string(part.declaredType)
        line.key("sniffed_type")
        line.string(part.sniffedType)
        line.key("content_type")
        line.string(part.contentType)
        line.key("bytes")
        line.integer(part.bytes)
        if part.dropped {
            line.key("dropped")
            line.bool(true)
        }
        for (algorithm, value) in part.digests {
            line.key(escaping: algorithm.rawValue)
            line.string(value)
        }
        line.endObject()
    }

    func writeEarly(status: Int, client: SocketAddress, error: String) {
        guard writer.isEnabled else { return }
        var line = JSONLine(capacity: 160)
        line.key("time")
        line.timestamp(unixMilliseconds: wallClockMilliseconds())
        line.key("client")
        line.string(client.host)
        line.key("status")
        line.integer(status)
        line.key("error")
        line.string(error)
        emit(&line)
    }

    private func emit(_ line: inout JSONLine) {
        // LogWriter takes a String: one conversion of the finished bytes (an enqueue of bytes
        // would save it; LogWriter belongs to the event-loop work).
        writer.enqueue(String(decoding: line.finish(), as: UTF8.self))
    }

    private func wallClockMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
