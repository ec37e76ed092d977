import Foundation
import HTTPCore
import MultipartParsing
import Testing

/// One part as the parser reported it: its head and its content, concatenated.
struct ParsedPart: Equatable {
    var head: PartHead
    var content: [UInt8]
}

/// Everything a parse produced: parts, anomalies, and the error if it failed.
///
/// Two failed parses are equal when they fail with the same error at the same offset after
/// the same part heads: how much content was delivered before the error depends on the splits.
struct ParseResult: Equatable {
    var parts: [ParsedPart] = []
    var anomalies: MultipartAnomalies = []
    var error: MultipartError?
    var ended = false

    static func == (lhs: ParseResult, rhs: ParseResult) -> Bool {
        if lhs.error != nil || rhs.error != nil {
            return lhs.error == rhs.error && lhs.parts.map(\.head) == rhs.parts.map(\.head)
        }
        return lhs.parts == rhs.parts && lhs.anomalies == rhs.anomalies && lhs.ended == rhs.ended
    }
}

/// Collects events and checks their order.
struct Collector: MultipartEventHandler {
    var result = ParseResult()
    var open = false
    var orderViolations: [String] = []

    mutating func handle(_ event: MultipartEvent) {
        switch event {
        case .partBegin(let head):
            if open || result.ended { orderViolations.append("partBegin inside a part or after end") }
            open = true
            result.parts.append(ParsedPart(head: head, content: []))
        case .body(let bytes):
            if !open || bytes.isEmpty { orderViolations.append("body outside a part or empty") }
            result.parts[result.parts.count - 1].content.append(contentsOf: bytes)
        case .partEnd:
            if !open { orderViolations.append("partEnd without partBegin") }
            open = false
        case .end:
            if open || result.ended { orderViolations.append("end inside a part or twice") }
            result.ended = true
        }
    }
}

/// Parses `input` fed in the pieces that `cuts` (sorted offsets) make.
func parse(
    _ input: [UInt8], boundary: [UInt8], limits: MultipartLimits = MultipartLimits(),
    policy: MultipartPolicy = MultipartPolicy(), cuts: [Int] = []
) -> ParseResult {
    var collector = Collector()
    do throws(MultipartError) {
        var parser = try MultipartParser(boundary: boundary, limits: limits, policy: policy)
        var start = 0
        for cut in cuts + [input.count] where cut >= start {
            try parser.feed(Array(input[start..<cut]), into: &collector)
            start = cut
        }
        try parser.finish(into: &collector)
        collector.result.anomalies = parser.anomalies
    } catch {
        collector.result.error = error
    }
    precondition(collector.orderViolations.isEmpty, "event order: \(collector.orderViolations)")
    return collector.result
}

/// Parses `input` fed one byte at a time.
func parseBytewise(
    _ input: [UInt8], boundary: [UInt8], limits: MultipartLimits = MultipartLimits(),
    policy: MultipartPolicy = MultipartPolicy()
) -> ParseResult {
    parse(input, boundary: boundary, limits: limits, policy: policy, cuts: Array(0..<input.count))
}

/// The deterministic generator random splits use (reproducible runs).
typealias SeededGenerator = SplitMix64

/// The split plans every parser input goes through: whole, byte by byte, then every single
/// split point (inputs up to 4 KiB) or 200 seeded random split pairs (larger inputs).
func splitPlans(count: Int, seed: UInt64 = 7) -> [[Int]] {
    var plans: [[Int]] = [[]]
    if count <= 4096 {
        plans += (1..<max(count, 1)).map { [$0] }
    } else {
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<200 {
            let a = Int.random(in: 1..<count, using: &generator)
            let b = Int.random(in: 1..<count, using: &generator)
            plans.append([min(a, b), max(a, b)])
        }
    }
    return plans
}

extension MultipartError.Reason {
    /// The case name without payload, as the manifest writes it.
    var caseName: String {
        let text = "\(self)"
        return String(text.prefix { $0 != "(" })
    }
}

extension HTTPCoreError.Reason {
    /// The case name without payload, as the manifest writes it.
    var caseName: String {
        let text = "\(self)"
        return String(text.prefix { $0 != "(" })
    }
}

/// Parses `input` whole, byte by byte and at every split plan; records an issue if any
/// feeding differs from the whole input, and returns the whole-input result.
func parseEverySplit(
    _ input: [UInt8], boundary: String = "b0undary", limits: MultipartLimits = MultipartLimits(),
    policy: MultipartPolicy = MultipartPolicy(), sourceLocation: SourceLocation = #_sourceLocation
) -> ParseResult {
    let boundary = Array(boundary.utf8)
    let whole = parse(input, boundary: boundary, limits: limits, policy: policy)
    let bytewise = parseBytewise(input, boundary: boundary, limits: limits, policy: policy)
    #expect(bytewise == whole, "byte-by-byte differs", sourceLocation: sourceLocation)
    for cuts in splitPlans(count: input.count) {
        let split = parse(input, boundary: boundary, limits: limits, policy: policy, cuts: cuts)
        if split != whole {
            Issue.record("split at \(cuts) differs: \(split) vs \(whole)", sourceLocation: sourceLocation)
            break
        }
    }
    return whole
}

/// A body written with `\n` for CRLF (`lf: true` keeps bare LF).
func body(_ text: String, lf: Bool = false) -> [UInt8] {
    Array((lf ? text : text.replacingOccurrences(of: "\n", with: "\r\n")).utf8)
}
