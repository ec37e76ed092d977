import Foundation
import HTTPCore
import Testing
import TraceContext
import Tracing

/// The exporter against a real receiver process (`OTLPReceiver`): batching, retries, a receiver
/// that is down or stalls, and shutdown. No verdict waits on a sleep: each test waits for the
/// condition it asserts, with a generous deadline that only ends a hung test.
@Suite(.serialized) struct SpanExporterTests {
    static let seed: UInt64 = 0xBA7C_4E5

    /// `count` sampled spans named `name-N`, from a generator seeded with `seed`.
    static func spans(_ count: Int, _ name: String, seed: UInt64 = seed) -> [Span] {
        var random = SplitMix64(seed: seed)
        let sampler = Sampler(ratio: 1)
        return (0..<count).map { index in
            let context = sampler.serverContext(incoming: nil, using: &random)
            var span = Span(
                context: context, name: "\(name)-\(index)", kind: .server, startTimeUnixNano: 1_000)
            span.endTimeUnixNano = 2_000
            span.set("formgate.route", .string("test"))
            return span
        }
    }

    static func settings(_ url: String, _ change: (inout TracingSettings) -> Void = { _ in }) throws
        -> TracingSettings
    {
        var settings = TracingSettings(endpoint: try OTLPEndpoint.parse(url: url).get())
        change(&settings)
        return settings
    }

    /// What the receiver accepted, checked for JSON errors and duplicates.
    static func accepted(_ receiver: OTLPReceiver) -> Set<String> {
        let answers = receiver.answers
        for answer in answers where !answer.errors.isEmpty {
            Issue.record("request \(answer.request) (spans from seed \(seed)): \(answer.errors)")
        }
        let ids = receiver.acceptedSpans.map(\.spanID)
        #expect(Set(ids).count == ids.count, "a span was accepted twice (spans from seed \(seed))")
        return Set(ids)
    }

    @Test func fullBatchesGoAtOnceAndShutdownSendsTheRest() throws {
        let receiver = try OTLPReceiver()
        let exporter = try SpanExporter(
            settings: Self.settings(receiver.url) { $0.batchDelayMilliseconds = 600_000 }, version: "test")
        let spans = Self.spans(1_100, "batch")
        for span in spans { exporter.submit(span) }
        #expect(eventually { exporter.counters.exported == 1_024 }, "\(exporter.counters)")
        // The 76 left wait for the (ten-minute) delay: nothing sends them but shutdown.
        #expect(exporter.queuedCount == 76)
        #expect(eventually { receiver.answers.count == 2 })
        #expect(receiver.answers.map(\.spans.count) == [512, 512])
        exporter.shutdown(within: .seconds(30))
        #expect(exporter.counters.exported == 1_100 && exporter.counters.dropped == 0, "\(exporter.counters)")
        #expect(eventually { receiver.answers.count == 3 })
        receiver.stop()
        #expect(receiver.answers.map(\.spans.count) == [512, 512, 76])
        #expect(Self.accepted(receiver) == Set(spans.map(\.spanID.description)))
        let order = receiver.answers.flatMap(\.spans).map(\.name) == spans.map(\.name)
        #expect(order, "the spans arrive in the order submitted")
    }

    @Test func aPartBatchGoesAfterTheDelay() throws {
        let receiver = try OTLPReceiver()
        let exporter = try SpanExporter(
            settings: Self.settings(receiver.url) { $0.batchDelayMilliseconds = 100 }, version: "test")
        let spans = Self.spans(3, "delay")
        for span in spans { exporter.submit(span) }
        #expect(eventually { exporter.counters.exported == 3 }, "\(exporter.counters)")
        #expect(eventually { receiver.answers.count == 1 })
        #expect(receiver.answers.map(\.spans.count) == [3])
        // A second lot, after the first went, makes a batch of its own.
        for span in Self.spans(2, "later", seed: Self.seed + 1) { exporter.submit(span) }
        #expect(eventually { exporter.counters.exported == 5 }, "\(exporter.counters)")
        exporter.shutdown(within: .seconds(30))
        receiver.stop()
        #expect(receiver.answers.map(\.spans.count) == [3, 2])
        #expect(Self.accepted(receiver).count == 5)
    }

    @Test func aKeepAliveConnectionClosedWhileIdleIsReopenedWithoutABackOff() throws {
        let receiver = try OTLPReceiver(["--close-after-answer"])
        let exporter = try SpanExporter(
            settings: Self.settings(receiver.url) {
                $0.batchDelayMilliseconds = 20
                $0.initialBackoffMilliseconds = 600_000
            }, version: "test")
        for round in 0..<3 {
            for span in Self.spans(2, "round\(round)", seed: Self.seed + UInt64(round)) {
                exporter.submit(span)
            }
            #expect(eventually { exporter.counters.exported == 2 * (round + 1) }, "\(exporter.counters)")
            #expect(eventually { receiver.answers.count == round + 1 }, "the receiver closed the connection")
        }
        let counters = exporter.counters
        #expect(counters.retries == 0 && counters.dropped == 0, "\(counters)")
        exporter.shutdown(within: .seconds(30))
        receiver.stop()
        #expect(Self.accepted(receiver).count == 6)
    }

    @Test func reloadedSettingsSendTheNextBatchToTheNewCollector() throws {
        let first = try OTLPReceiver()
        let second = try OTLPReceiver()
        let exporter = try SpanExporter(
            settings: Self.settings(first.url) { $0.batchDelayMilliseconds = 20 }, version: "test")
        for span in Self.spans(3, "before") { exporter.submit(span) }
        #expect(eventually { exporter.counters.exported == 3 }, "\(exporter.counters)")
        exporter.update(settings: try Self.settings(second.url) { $0.batchDelayMilliseconds = 20 })
        for span in Self.spans(4, "after", seed: Self.seed + 1) { exporter.submit(span) }
        #expect(eventually { exporter.counters.exported == 7 }, "\(exporter.counters)")
        exporter.shutdown(within: .seconds(30))
        first.stop()
        second.stop()
        #expect(first.acceptedSpans.map(\.name) == ["before-0", "before-1", "before-2"])
        #expect(second.acceptedSpans.map(\.name) == ["after-0", "after-1", "after-2", "after-3"])
    }

    @Test func a503WithRetryAfterIsRetriedOnceAfterItsDelay() throws {
        let receiver = try OTLPReceiver(["--responses", "503,200", "--retry-after", "1"])
        let exporter = try SpanExporter(
            settings: Self.settings(receiver.url) {
                $0.batchDelayMilliseconds = 50
                $0.initialBackoffMilliseconds = 10
            }, version: "test")
        let spans = Self.spans(5, "retry")
        for span in spans { exporter.submit(span) }
        #expect(eventually { exporter.counters.exported == 5 }, "\(exporter.counters)")
        let counters = exporter.counters
        #expect(counters.retries == 1 && counters.failedExports == 0 && counters.dropped == 0, "\(counters)")
        exporter.shutdown(within: .seconds(30))
        receiver.stop()
        let answers = receiver.answers
        try #require(answers.count == 2, "\(answers.map(\.status))")
        #expect(answers.map(\.status) == [503, 200])
        #expect(answers[0].spans.map(\.spanID) == answers[1].spans.map(\.spanID), "the same batch again")
        // Retry-After: 1 was honoured over the 10 ms back-off (a lower bound: safe when loaded).
        #expect(answers[1].time - answers[0].time >= 0.9, "\(answers[1].time - answers[0].time) s")
        #expect(Self.accepted(receiver) == Set(spans.map(\.spanID.description)))
    }

    @Test func aRefusingReceiverIsRetriedABoundedNumberOfTimes() throws {
        let receiver = try OTLPReceiver(["--responses", "400"])
        let exporter = try SpanExporter(
            settings: Self.settings(receiver.url) { $0.batchDelayMilliseconds = 20 }, version: "test")
        for span in Self.spans(4, "refused") { exporter.submit(span) }
        #expect(eventually { exporter.counters.failedExports == 1 }, "\(exporter.counters)")
        let counters = exporter.counters
        #expect(counters.dropped == 4 && counters.retries == 0 && counters.exported == 0, "\(counters)")
        #expect(exporter.lastFailure?.contains("400") == true, "\(exporter.lastFailure ?? "")")
        exporter.shutdown(within: .seconds(30))
        receiver.stop()
        #expect(receiver.answers.count == 1, "a 400 is final")
    }

    @Test func aReceiverThatIsDownCostsSubmitNothingAndItsSpansAreDropped() throws {
        let port = try closedPort()
        let exporter = try SpanExporter(
            settings: Self.settings("http://127.0.0.1:\(port)/v1/traces") {
                $0.batchDelayMilliseconds = 20
                $0.maxAttempts = 3
                $0.initialBackoffMilliseconds = 20
            }, version: "test")
        for span in Self.spans(10, "down") { exporter.submit(span) }
        #expect(eventually { exporter.counters.failedExports == 1 }, "\(exporter.counters)")
        let counters = exporter.counters
        #expect(counters.dropped == 10 && counters.retries == 2 && counters.exported == 0, "\(counters)")
        #expect(exporter.lastFailure?.contains("refused") == true, "\(exporter.lastFailure ?? "")")
        exporter.shutdown(within: .seconds(30))
    }

    @Test func aStalledReceiverFillsTheQueueAndSubmitStillReturns() throws {
        let receiver = try OTLPReceiver(["--stall"])
        let exporter = try SpanExporter(
            settings: Self.settings(receiver.url) {
                $0.batchSize = 10
                $0.queueCapacity = 100
                $0.batchDelayMilliseconds = 600_000
                $0.exportTimeoutMilliseconds = 600_000
            }, version: "test")
        for span in Self.spans(10, "first") { exporter.submit(span) }
        // The thread has sent the first batch and waits for an answer that does not come.
        #expect(eventually { receiver.arrivals == 1 }, "\(receiver.stderr)")
        let submitted = Counter()
        let more = Self.spans(1_000, "more", seed: Self.seed + 2)
        let submitter = Thread {
            for span in more {
                exporter.submit(span)
                submitted.increment()
            }
        }
        submitter.start()
        // Every submit returned while the export is stuck: the queue took 100, the rest dropped.
        #expect(eventually { submitted.value == 1_000 }, "submit waited: \(submitted.value) returned")
        #expect(exporter.counters.dropped == 900 && exporter.queuedCount == 100, "\(exporter.counters)")
        try receiver.release()
        exporter.shutdown(within: .seconds(60))
        let counters = exporter.counters
        #expect(
            counters.exported == 110 && counters.dropped == 900 && counters.failedExports == 0, "\(counters)")
        #expect(eventually { receiver.answers.count == 11 })
        receiver.stop()
        #expect(Self.accepted(receiver).count == 110)
    }

    @Test func shutdownGivesUpAtItsDeadlineAndLaterSpansAreDropped() throws {
        let port = try closedPort()
        let exporter = try SpanExporter(
            settings: Self.settings("http://127.0.0.1:\(port)") {
                $0.batchDelayMilliseconds = 600_000
                $0.initialBackoffMilliseconds = 600_000
            }, version: "test")
        for span in Self.spans(7, "late") { exporter.submit(span) }
        // The first attempt is refused; the next would come after ten minutes, past the deadline.
        // (On a machine too loaded to try once in 500 ms, the spans are dropped untried.)
        exporter.shutdown(within: .milliseconds(500))
        var counters = exporter.counters
        #expect(counters.dropped == 7 && counters.failedExports <= 1 && counters.exported == 0, "\(counters)")
        exporter.submit(Self.spans(1, "after")[0])
        counters = exporter.counters
        #expect(counters.dropped == 8, "\(counters)")
        exporter.shutdown(within: .seconds(1))  // a second call returns at once
    }
}

/// A count shared with another thread.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0

    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
