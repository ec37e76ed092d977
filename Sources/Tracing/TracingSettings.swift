public import TraceContext

/// `tracing:` (DESIGN.md, "Tracing"): where spans go, under which service name, how many
/// traces are sampled, and how the exporter batches and retries.
///
/// The YAML sets `endpoint` (`otlp`), `serviceName` and `sample`; the rest keep their
/// defaults there (tests and tools set them).
public struct TracingSettings: Hashable, Sendable {
    /// The OTLP/HTTP collector: plain http (`https` is refused: the exporter has no TLS yet).
    public var endpoint: OTLPEndpoint
    /// `service_name`: the resource's `service.name` (default `formgate`).
    public var serviceName = "formgate"
    /// `sample`: the share of new traces recorded, 0…1 (default 1, OpenTelemetry's default
    /// of sampling everything; a busy gateway lowers it). A client's `traceparent` decides
    /// for its own trace whatever this says.
    public var sample = 1.0
    /// The most spans in one export (OpenTelemetry's batch processor default, 512).
    public var batchSize = 512
    /// How long a span waits for a batch to fill before the batch goes anyway: milliseconds.
    public var batchDelayMilliseconds: Int64 = 5000
    /// Spans waiting to be exported at most; more are dropped and counted.
    public var queueCapacity = 2048
    /// Each export attempt's deadline, connection included: milliseconds.
    public var exportTimeoutMilliseconds: Int64 = 10_000
    /// Attempts per batch, the first included, before its spans are dropped.
    public var maxAttempts = 5
    /// The first back-off; each later one doubles, with up to half taken off at random.
    public var initialBackoffMilliseconds: Int64 = 1000
    /// The longest back-off, `Retry-After` included.
    public var maxBackoffMilliseconds: Int64 = 30_000

    /// Settings for `endpoint`, with the defaults above.
    public init(endpoint: OTLPEndpoint) {
        self.endpoint = endpoint
    }

    /// `Sampler(ratio: sample)`.
    public var sampler: Sampler { Sampler(ratio: sample) }
}
