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

    /// Writes the record's line, built once into bytes (`JSONLine`): no `String` per value.
    func write(_ record: AccessRecord, client: SocketAddress) {
        guard writer.isEnabled else { return }
        guard let requestID = record.requestID else { return writeEarly(record, client: client) }
        var line = JSONLine()
        line.key("time")
        line.timestamp(unixMilliseconds: wallClockMilliseconds())
        line.key("id")
        line.string(requestID)
        line.key("client")
        line.string(client.host)
        line.key("method")
        line.string(record.method ?? "")
        line.key("path")
        line.string(record.path ?? "")
        line.key("status")
        line.integer(record.status)
        line.key("upstream_status")
        line.integer(record.upstreamStatus)
        line.key("bytes_in")
        line.integer(record.bytesIn)
        line.key("bytes_out")
        line.integer(record.bytesOut)
        line.key("duration_ms")
        line.integer(record.finishedAt - record.startedAt)
        line.key("upstream_ms")
        line.integer(record.upstreamMilliseconds)
        line.key("route")
        line.string(record.route)
        line.key("protocol")
        line.string(record.clientProtocol.isHTTP2 ? "h2" : "http/1.1")
        if let stream = record.clientProtocol.streamID {
            line.key("stream")
            line.integer(Int64(stream))
        }
        line.key("identity")
        line.string(record.identity)
        if let multipart = record.multipart { Self.write(multipart, to: &line) }
        if let tus = record.tus { Self.write(tus, to: &line) }
        line.key("error")
        line.string(record.error)
        emit(&line)
    }

    /// The multipart body's fields of a line: anomalies, parts, injected fields, providers.
    private static func write(_ multipart: AccessRecord.Multipart, to line: inout JSONLine) {
        line.key("anomalies")
        line.beginArray()
        for name in multipart.anomalies { line.string(name) }
        line.endArray()
        line.key("parts")
        line.beginArray()
        for part in multipart.parts { write(part, to: &line) }
        line.endArray()
        line.key("injected")
        line.beginArray()
        for name in multipart.injected { line.string(name) }
        line.endArray()
        guard !multipart.providers.isEmpty else { return }
        line.key("providers")
        line.beginArray()
        for provider in multipart.providers { line.string(provider) }
        line.endArray()
        line.key("object_key")
        line.string(multipart.objectKey)
    }

    /// A tus request's object: `tus: { id, offset, length, event }`.
    private static func write(_ tus: TusLog, to line: inout JSONLine) {
        line.key("tus")
        line.beginObject()
        line.key("id")
        line.string(tus.id)
        line.key("offset")
        line.integer(tus.offset)
        line.key("length")
        line.integer(tus.length)
        line.key("event")
        line.string(tus.event)
        line.endObject()
    }

    private static func write(_ part: AccessRecord.Part, to line: inout JSONLine) {
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
        if let scan = part.scan {
            line.key("scan")
            line.string(scan)
        }
        if !part.stripped.isEmpty {
            line.key("stripped")
            line.beginArray()
            for kind in part.stripped { line.string(kind) }
            line.endArray()
        }
        line.endObject()
    }

    /// A request refused before its exchange started: time, client, status and error.
    private func writeEarly(_ record: AccessRecord, client: SocketAddress) {
        var line = JSONLine(capacity: 160)
        line.key("time")
        line.timestamp(unixMilliseconds: wallClockMilliseconds())
        line.key("client")
        line.string(client.host)
        line.key("status")
        line.integer(record.status)
        if let stream = record.clientProtocol.streamID {
            // An HTTP/2 stream refused before its exchange (malformed, 431).
            line.key("protocol")
            line.string("h2")
            line.key("stream")
            line.integer(Int64(stream))
        }
        line.key("error")
        line.string(record.error ?? "")
        emit(&line)
    }

    private func emit(_ line: inout JSONLine) {
        writer.enqueue(line.finish())
    }

    private func wallClockMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
