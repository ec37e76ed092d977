import EventLoop
import ProxyCore
import TraceContext
import Tracing

/// Turns a sampled exchange's record into its spans when it ends, on its loop, and hands them
/// to the exporter (which queues them and returns: export happens on its own thread).
///
/// The SERVER span runs from the request head to the end of the response; the CLIENT span of
/// the upstream attempt from asking for the connection to the end of the response; a CLIENT
/// span per consultation (an auth service, Redis for a shared limit, clamd's verdict on a
/// file) from the question to its answer. Each
/// carries the HTTP semantic conventions' attributes, FormGate's own (`formgate.route`,
/// `formgate.parts`, `formgate.bytes_in`, scan and strip results), and events at the first and
/// last byte each way. Times come from the loop's millisecond clock, placed on the wall clock
/// at the end. No credential is ever an attribute: no header value is recorded, the path
/// has no query, the identity is a subject or key name.
final class Tracer: Sendable {
    let exporter: SpanExporter

    init(exporter: SpanExporter) {
        self.exporter = exporter
    }

    /// Queues `record`'s spans, if it was sampled; `now` is the loop's clock. The spans are
    /// built on the export thread (`ExchangeSpans`): the loop only queues.
    func export(_ record: AccessRecord, client: SocketAddress, now: Int64) {
        guard let trace = record.trace else { return }
        exporter.submit(
            ExchangeSpans(
                record: record, trace: trace, client: client.host, now: now, wall: WallClock.nowUnixNano()))
    }

    /// The spans of a sampled exchange: its SERVER span, then its upstream attempt's CLIENT
    /// span if it had one. `wall` (unix nanoseconds) is the wall clock at `now`.
    static func spans(
        _ record: AccessRecord, trace: ExchangeTrace, client: String, now: Int64, wall: UInt64
    ) -> [Span] {
        func nanos(_ clock: Int64) -> UInt64 {
            let back = UInt64(max(0, now - clock)) * 1_000_000
            return wall > back ? wall - back : 0
        }
        let method = record.method ?? "_OTHER"
        var server = Span(
            context: trace.server, name: record.route.map { "\(method) \($0)" } ?? method, kind: .server,
            startTimeUnixNano: nanos(record.startedAt))
        server.endTimeUnixNano = nanos(record.finishedAt)
        server.set("http.request.method", .string(method))
        server.set("url.path", .string(record.path ?? ""))
        server.set("client.address", .string(client))
        server.set("network.protocol.name", .string("http"))
        server.set("network.protocol.version", .string(record.clientProtocol.isHTTP2 ? "2" : "1.1"))
        server.set("http.response.status_code", .int(Int64(record.status)))
        server.set("http.request.body.size", .int(record.bytesIn))
        server.set("formgate.request_id", .string(record.requestID ?? ""))
        server.set("formgate.bytes_in", .int(record.bytesIn))
        if let route = record.route { server.set("formgate.route", .string(route)) }
        if let identity = record.identity { server.set("formgate.identity", .string(identity)) }
        if let multipart = record.multipart {
            server.set("formgate.parts", .int(Int64(multipart.parts.count)))
            let scans = multipart.parts.compactMap(\.scan)
            if !scans.isEmpty { server.set("formgate.scan", .string(scans.joined(separator: ","))) }
            let stripped = multipart.parts.flatMap(\.stripped)
            if !stripped.isEmpty { server.set("formgate.stripped", .string(stripped.joined(separator: ","))) }
        }
        if let tus = record.tus, let id = tus.id { server.set("formgate.tus.id", .string(id)) }
        if let first = trace.bodyFirstByte { server.addEvent("request.first_byte", at: nanos(first)) }
        if let last = trace.bodyLastByte { server.addEvent("request.last_byte", at: nanos(last)) }
        server.addEvent("response.first_byte", at: nanos(trace.upstreamResponseHead ?? record.finishedAt))
        server.addEvent("response.last_byte", at: nanos(record.finishedAt))
        if record.status >= 500 || record.status == 499 {
            server.set("error.type", .string(String(record.status)))
            server.status = .error(message: record.error ?? "status \(record.status)")
        }
        var spans = [server]
        for consultation in trace.consultations {
            var span = Span(
                context: consultation.context, name: "consult \(consultation.service)", kind: .client,
                startTimeUnixNano: nanos(consultation.start))
            span.endTimeUnixNano = nanos(consultation.end ?? record.finishedAt)
            span.set("formgate.consultation", .string(consultation.service))
            span.set("formgate.outcome", .string(consultation.outcome ?? "unanswered"))
            if consultation.outcome == nil {
                span.status = .error(message: "no answer before the request ended")
            }
            spans.append(span)
        }
        guard let start = trace.upstreamStart, let target = trace.upstreamTarget else { return spans }
        var upstream = Span(
            context: trace.upstream, name: method, kind: .client, startTimeUnixNano: nanos(start))
        upstream.endTimeUnixNano = nanos(record.finishedAt)
        upstream.set("http.request.method", .string(method))
        upstream.set("server.address", .string(target.host))
        upstream.set("server.port", .int(Int64(target.port)))
        upstream.set("url.full", .string(target.description + (record.path ?? "")))
        upstream.set("network.protocol.version", .string("1.1"))
        if let status = record.upstreamStatus {
            upstream.set("http.response.status_code", .int(Int64(status)))
        }
        if let sent = trace.upstreamHeadSent { upstream.addEvent("request.first_byte", at: nanos(sent)) }
        if let sent = trace.upstreamBodySent { upstream.addEvent("request.last_byte", at: nanos(sent)) }
        if let head = trace.upstreamResponseHead {
            upstream.addEvent("response.first_byte", at: nanos(head))
            upstream.addEvent("response.last_byte", at: nanos(record.finishedAt))
        }
        if record.upstreamStatus.map({ $0 >= 500 }) ?? true {
            let message =
                record.upstreamStatus.map { "upstream status \($0)" } ?? record.error ?? "no response"
            upstream.set("error.type", .string(record.upstreamStatus.map(String.init) ?? "no_response"))
            upstream.status = .error(message: message)
        }
        spans.append(upstream)
        return spans
    }
}

/// An ended exchange's spans, built when the exporter sends them (`SpanSource`). The trace is
/// no longer touched by its loop once the exchange ended.
struct ExchangeSpans: SpanSource {
    let record: AccessRecord
    let trace: ExchangeTrace
    let client: String
    let now: Int64
    let wall: UInt64

    var spanCount: Int {
        1 + trace.consultations.count + (trace.upstreamStart != nil && trace.upstreamTarget != nil ? 1 : 0)
    }

    func spans() -> [Span] {
        Tracer.spans(record, trace: trace, client: client, now: now, wall: wall)
    }
}
