import Tracing

/// The tracing series, from the span exporter's counters (`SpanExporter.counters`):
/// `formgate_trace_spans_exported_total` (spans the collector accepted),
/// `formgate_trace_spans_dropped_total` (the queue was full, the batch was refused or ran out of
/// attempts, or the span came after shutdown), `formgate_trace_export_failures_total` (batches
/// given up on) and `formgate_trace_export_retries_total` (attempts after a batch's first).
/// Nothing is written without an exporter. `render()` does not call this yet: wiring the
/// exporter into the proxy will pass its counters here.
extension Metrics {
    static func renderTracing(_ counters: ExportCounters?, into out: inout String) {
        guard let counters else { return }
        let series: [(String, String, Int)] = [
            ("formgate_trace_spans_exported_total", "Spans the OTLP collector accepted.", counters.exported),
            (
                "formgate_trace_spans_dropped_total",
                "Spans never exported: queue full, batch refused or out of attempts, or after shutdown.",
                counters.dropped
            ),
            ("formgate_trace_export_failures_total", "Span batches given up on.", counters.failedExports),
            (
                "formgate_trace_export_retries_total", "Span export attempts after a batch's first.",
                counters.retries
            ),
        ]
        for (name, help, value) in series {
            family(name, "counter", help, into: &out)
            out += "\(name) \(value)\n"
        }
    }
}
