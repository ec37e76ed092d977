import Testing

@testable import HTTP1

@Suite struct StartLineTests {
    /// The start line is cut at its first two spaces exactly as `split` with `maxSplits: 2`
    /// and empty elements kept would cut it, for every short line of `a`, `b` and spaces.
    @Test func startLinePartsMatchSplit() {
        var lines: [[UInt8]] = [[]]
        for _ in 0..<7 {
            lines += lines.filter { $0.count == lines.last!.count }.flatMap { line in
                [line + [0x61], line + [0x62], line + [0x20]]
            }
        }
        for line in lines {
            let expected = line[...].split(separator: 0x20, maxSplits: 2, omittingEmptySubsequences: false)
            let parts = HeadParser.startLineParts(line[...])
            if expected.count == 1 {
                #expect(parts == nil, "\(line)")
                continue
            }
            let got = parts.map { [Array($0.0), Array($0.1)] + ($0.2.map { [Array($0)] } ?? []) }
            #expect(got == expected.map { Array($0) }, "\(line)")
        }
    }
}
