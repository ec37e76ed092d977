import Foundation
import Testing
import TraceContext

@testable import Tracing

/// The retry rules of an export, without sockets.
@Suite struct RetryPolicyTests {
    @Test(
        arguments: [
            (200, nil, RetryPolicy.Verdict.delivered), (202, "5", .delivered),
            (429, nil, .retryable(retryAfterMilliseconds: nil)),
            (503, "1", .retryable(retryAfterMilliseconds: 1000)),
            (502, " 2 ", .retryable(retryAfterMilliseconds: 2000)),
            (504, "-1", .retryable(retryAfterMilliseconds: nil)),
            (503, "Wed, 21 Oct 2015 07:28:00 GMT", .retryable(retryAfterMilliseconds: nil)),
            (429, "999999", .retryable(retryAfterMilliseconds: 86_400_000)),
            (400, nil, .rejected), (401, nil, .rejected), (404, nil, .rejected), (413, nil, .rejected),
            (500, "1", .rejected), (301, nil, .rejected),
        ] as [(Int, String?, RetryPolicy.Verdict)])
    func verdicts(_ status: Int, _ retryAfter: String?, _ verdict: RetryPolicy.Verdict) {
        #expect(RetryPolicy.verdict(status: status, retryAfter: retryAfter) == verdict)
    }

    @Test func backOffDoublesLosesUpToHalfAndStops() {
        var settings = TracingSettings(endpoint: OTLPEndpoint(host: "c", port: 4318))
        settings.maxAttempts = 6
        settings.initialBackoffMilliseconds = 100
        settings.maxBackoffMilliseconds = 1000
        let policy = RetryPolicy(settings)
        // `random` 0 takes nothing off; a `random` of half the delay takes half off.
        #expect(
            (1...5).map { policy.backoff(afterAttempt: $0, retryAfterMilliseconds: nil, random: 0) } == [
                100, 200, 400, 800, 1000,
            ])
        #expect(policy.backoff(afterAttempt: 3, retryAfterMilliseconds: nil, random: 200) == 200)
        #expect(
            policy.backoff(afterAttempt: 6, retryAfterMilliseconds: nil, random: 0) == nil, "6 attempts made")
        #expect(
            policy.backoff(afterAttempt: 1, retryAfterMilliseconds: 5_000, random: 0) == 1000,
            "Retry-After capped")
        #expect(
            policy.backoff(afterAttempt: 1, retryAfterMilliseconds: 300, random: 7) == 300,
            "Retry-After as given")
        for random in [UInt64.max, 12_345, 99] {
            let wait = policy.backoff(afterAttempt: 2, retryAfterMilliseconds: nil, random: random) ?? -1
            #expect((100...200).contains(wait), "\(random): \(wait)")
        }
    }
}

/// The export queue's ring.
@Suite struct SpanQueueTests {
    static func span(_ index: Int) -> Span {
        let context = SpanContext(
            traceID: TraceID(high: 1, low: UInt64(index + 1)), spanID: SpanID(UInt64(index + 1)),
            parentSpanID: nil,
            sampled: true)
        return Span(context: context, name: "s\(index)", kind: .internal, startTimeUnixNano: 0)
    }

    @Test func keepsOrderAcrossTheWrapAndRefusesWhenFull() {
        var queue = SpanQueue(capacity: 4)
        var batch: [Span] = []
        var next = 0
        var expected = 0
        for round in 0..<10 {
            while queue.count < 4 {
                let pushed = queue.push(Self.span(next))
                #expect(pushed)
                next += 1
            }
            let overflow = queue.push(Self.span(-1))
            #expect(!overflow, "full")
            batch.removeAll()
            queue.pop(upTo: 1 + round % 4, into: &batch)
            for span in batch {
                #expect(span.name == "s\(expected)")
                expected += 1
            }
        }
        let removed = queue.removeAll()
        #expect(removed > 0 && queue.isEmpty)
        queue.pop(upTo: 10, into: &batch)
        #expect(SpanQueue(capacity: 0).capacity == 1)
    }

    /// Deferred sources count their spans against the capacity, are never built when they do
    /// not fit, and come out whole (a source is never split across batches).
    @Test func deferredSourcesCountTheirSpansAndAreBuiltOnlyWhenTaken() {
        var queue = SpanQueue(capacity: 5)
        let built = BuildCounter()
        let first = queue.push(entry: .deferred(Source(count: 3, built: built)))
        #expect(first)
        let second = queue.push(entry: .deferred(Source(count: 3, built: built)))
        #expect(!second, "6 spans in 5")
        let spans = queue.push(Self.span(0)) && queue.push(Self.span(1))
        #expect(spans)
        #expect(queue.count == 5 && built.value == 0)
        var taken: [SpanQueue.Entry] = []
        queue.pop(upTo: 2, into: &taken)
        #expect(taken.count == 1 && queue.count == 2, "the source came out whole, past the limit")
        var batch: [Span] = []
        for entry in taken { entry.append(to: &batch) }
        #expect(batch.count == 3 && built.value == 1)
    }
}

private final class BuildCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
}

private struct Source: SpanSource {
    let count: Int
    let built: BuildCounter
    var spanCount: Int { count }
    func spans() -> [Span] {
        built.add()
        return (0..<count).map { SpanQueueTests.span(100 + $0) }
    }
}
