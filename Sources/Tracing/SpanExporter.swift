import EventLoop
import Synchronization

/// Sends finished spans to an OTLP/HTTP collector from a thread of its own, so no event loop
/// ever waits for the collector.
///
/// `submit(_:)` is what a loop calls: it takes the lock for queue bookkeeping only (a push
/// into a fixed ring, at most a condition signal: never I/O, never the export) and returns;
/// when the queue is full the span is dropped and counted. The thread sends a batch when
/// `batchSize` spans wait or the oldest has waited `batchDelayMilliseconds`, as JSON
/// (`OTLPJSON`) over one keep-alive connection, retrying connection failures and 429, 502,
/// 503 and 504 with back-off (`Retry-After` honoured, capped) for at most `maxAttempts`
/// attempts; spans of a batch that cannot be delivered are counted dropped. `shutdown` sends
/// what is queued before it returns, within its time.
///
/// The thread keeps the exporter alive until `shutdown(within:)` returns: call it once, when
/// the loops have stopped (spans submitted while it drains are still sent).
public final class SpanExporter: @unchecked Sendable {
    /// FormGate's version, for the resource, the scope and `User-Agent`.
    let version: String
    let signal = ExportSignal()
    // Under `signal`'s lock:
    var queue: SpanQueue
    var settings: TracingSettings
    /// When the queue last went from empty to not (monotonic ns): the batch delay runs from it.
    var oldestQueuedAt: UInt64 = 0
    /// Set by `shutdown`: send everything now, and give up on what is left at this instant.
    var drainDeadline: UInt64?
    /// The thread has ended: spans are dropped.
    var closed = false
    var thread: EventLoopThread?
    /// The last export failure, for the log.
    var lastFailureText: String?
    // Counted without the lock:
    let exportedSpans = Atomic<Int>(0)
    let droppedSpans = Atomic<Int>(0)
    let failedBatches = Atomic<Int>(0)
    let retriedAttempts = Atomic<Int>(0)

    /// Starts the export thread for `settings` (`queueCapacity` is fixed from here on);
    /// `version` is FormGate's.
    ///
    /// - Throws: `TracingError` when the thread cannot be created.
    public init(settings: TracingSettings, version: String) throws(TracingError) {
        self.settings = settings
        self.version = version
        queue = SpanQueue(capacity: settings.queueCapacity)
        do throws(EventLoopError) {
            let started = try EventLoopThread.start(name: "trace-export") { [self] in run() }
            signal.lock()
            thread = started
            signal.unlock()
        } catch {
            throw TracingError("cannot start the span exporter's thread: \(error)")
        }
    }

    /// Queues `span` for export; drops and counts it when the queue is full or the exporter
    /// has shut down. Any thread; returns without waiting for I/O.
    public func submit(_ span: Span) {
        submit(entry: .span(span))
    }

    /// Queues `source`, whose spans the export thread builds when it sends them; drops and
    /// counts them when they do not fit. Any thread; returns without waiting for I/O, and
    /// without building a span.
    public func submit(_ source: any SpanSource) {
        submit(entry: .deferred(source))
    }

    private func submit(entry: SpanQueue.Entry) {
        let spans = entry.spanCount
        signal.lock()
        guard !closed, queue.push(entry: entry) else {
            signal.unlock()
            droppedSpans.add(spans, ordering: .relaxed)
            return
        }
        if queue.count == spans {
            oldestQueuedAt = WallClock.monotonicNano()
            signal.signal()
        } else if queue.count >= max(1, settings.batchSize), queue.count - spans < max(1, settings.batchSize)
        {
            signal.signal()
        }
        signal.unlock()
    }

    /// What the exporter has done so far (each figure read atomically, not all at one instant).
    public var counters: ExportCounters {
        var counters = ExportCounters()
        counters.exported = exportedSpans.load(ordering: .relaxed)
        counters.dropped = droppedSpans.load(ordering: .relaxed)
        counters.failedExports = failedBatches.load(ordering: .relaxed)
        counters.retries = retriedAttempts.load(ordering: .relaxed)
        return counters
    }

    /// Why the last failed export attempt failed, if one did (`connect 127.0.0.1:4318:
    /// Connection refused`, `http://127.0.0.1:4318/v1/traces answered 400`), for the log.
    public var lastFailure: String? {
        signal.lock()
        defer { signal.unlock() }
        return lastFailureText
    }

    /// Spans waiting in the queue now.
    public var queuedCount: Int {
        signal.lock()
        defer { signal.unlock() }
        return queue.count
    }

    /// Applies reloaded settings from the next batch on (a new endpoint gets a new
    /// connection). `queueCapacity` keeps the value the exporter started with.
    public func update(settings newSettings: TracingSettings) {
        signal.lock()
        settings = newSettings
        signal.signal()
        signal.unlock()
    }

    /// Sends every queued span (and those submitted meanwhile), retries included, until the
    /// queue is empty or `timeout` has passed; then drops what is left (counted), stops the
    /// thread and returns. Later submits are dropped and counted. Call from outside the
    /// exporter's thread; a second call returns at once.
    public func shutdown(within timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        let milliseconds = min(max(0, seconds), 864_000) * 1000 + max(0, attoseconds / 1_000_000_000_000_000)
        signal.lock()
        let deadline = WallClock.monotonicNano() + WallClock.nanoseconds(milliseconds: milliseconds)
        drainDeadline = min(drainDeadline ?? deadline, deadline)
        let running = thread
        thread = nil
        signal.signal()
        signal.unlock()
        running?.join()
    }
}
