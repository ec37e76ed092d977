import HTTPCore
import Testing
import TraceContext
import Tracing

/// Sampling (parent-based, then the trace id's ratio) and the ids it hands out.
@Suite struct SamplerTests {
    /// The seed of every random sequence here (printed in each failure).
    static let seed: UInt64 = 0x5EED_7ACE

    @Test func theRatioDecidesFromTheLastEightBytes() {
        let half = Sampler(ratio: 0.5)
        #expect(half.samples(TraceID(high: .max, low: 0x7FFF_FFFF_FFFF_FFFF)))
        #expect(!half.samples(TraceID(high: 0, low: 0x8000_0000_0000_0000)))
        let tenth = Sampler(ratio: 0.1)
        #expect(tenth.samples(TraceID(high: 1, low: 1_844_674_407_370_955_000)))
        #expect(!tenth.samples(TraceID(high: 1, low: 1_844_674_407_370_955_300)))
        #expect(Sampler(ratio: 1).samples(TraceID(high: .max, low: .max)))
        #expect(!Sampler(ratio: 0).samples(TraceID(high: 0, low: 1)))
        #expect(
            Sampler(ratio: 7).ratio == 1 && Sampler(ratio: -1).ratio == 0 && Sampler(ratio: .nan).ratio == 0)
    }

    @Test(arguments: [0.0, 0.01, 0.25, 0.5, 0.9, 1.0])
    func aRatioKeepsItsShareOfNewTraces(_ ratio: Double) {
        var random = SplitMix64(seed: Self.seed)
        let sampler = Sampler(ratio: ratio)
        var kept = 0
        let count = 20_000
        for _ in 0..<count {
            let context = sampler.serverContext(incoming: nil, using: &random)
            #expect(context.parentSpanID == nil && context.sampled == sampler.samples(context.traceID))
            if context.sampled { kept += 1 }
        }
        let expected = Double(count) * ratio
        // Binomial: 4 standard deviations, plus 1 for the two ends (0 and 1 are exact).
        let tolerance = 4 * (Double(count) * ratio * (1 - ratio)).squareRoot() + 1
        #expect(abs(Double(kept) - expected) <= tolerance, "ratio \(ratio), seed \(Self.seed): kept \(kept)")
    }

    @Test func aTraceSampledAtOneRatioIsSampledAtEveryHigherOne() {
        var random = SplitMix64(seed: Self.seed)
        let ratios = [0.05, 0.1, 0.3, 0.6, 0.99]
        for _ in 0..<5_000 {
            let id = TraceID.random(using: &random)
            let decisions = ratios.map { Sampler(ratio: $0).samples(id) }
            #expect(decisions == decisions.sorted { !$0 && $1 }, "seed \(Self.seed), id \(id)")
            #expect(
                decisions == ratios.map { Sampler(ratio: $0).samples(id) }, "the same id, the same answer")
        }
    }

    @Test func aClientsTraceparentDecidesEitherWay() throws {
        var random = SplitMix64(seed: Self.seed)
        let sampled = try #require(
            TraceParent(parsing: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"))
        let context = Sampler(ratio: 0).serverContext(incoming: sampled, using: &random)
        #expect(
            context.sampled && context.traceID == sampled.traceID && context.parentSpanID == sampled.parentID)
        #expect(context.spanID != sampled.parentID && context.spanID.isValid)
        var unsampled = sampled
        unsampled.flags = 0
        #expect(!Sampler(ratio: 1).serverContext(incoming: unsampled, using: &random).sampled)
    }

    @Test func aChildIsTheNextHopsParent() {
        var random = SplitMix64(seed: Self.seed)
        let server = Sampler(ratio: 1).serverContext(incoming: nil, using: &random)
        let client = server.child(using: &random)
        #expect(client.traceID == server.traceID && client.parentSpanID == server.spanID)
        #expect(client.sampled && client.spanID != server.spanID)
        #expect(client.traceParent.description == "00-\(server.traceID)-\(client.spanID)-01")
    }

    @Test func idsAreNeverZeroAndDoNotRepeat() {
        /// Zeros first: an id drawn from them is drawn again.
        struct ZerosFirst: RandomNumberGenerator {
            var zeros = 3
            var source = SplitMix64(seed: SamplerTests.seed)
            mutating func next() -> UInt64 {
                if zeros > 0 {
                    zeros -= 1
                    return 0
                }
                return source.next()
            }
        }
        var zeros = ZerosFirst()
        #expect(TraceID.random(using: &zeros).isValid)
        zeros.zeros = 2
        #expect(SpanID.random(using: &zeros).isValid)
        var generator = IDGenerator()
        var traces = Set<TraceID>()
        var spans = Set<SpanID>()
        for _ in 0..<10_000 {
            traces.insert(TraceID.random(using: &generator))
            spans.insert(SpanID.random(using: &generator))
        }
        #expect(traces.count == 10_000 && spans.count == 10_000)
        #expect(traces.allSatisfy(\.isValid) && spans.allSatisfy(\.isValid))
    }
}
