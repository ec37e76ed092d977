import HTTPCore
import MultipartParsing
import Testing

/// Every body of `Tests/Fixtures/corpus` (browser captures and other parsers' suites): valid
/// ones give their expected parts byte for byte, refused ones are refused, under every split.
@Suite struct CorpusTests {
    @Test(arguments: CorpusCase.all)
    func corpusCase(_ testCase: CorpusCase) throws {
        if testCase.verdict == "refuse" {
            #expect(testCase.error != nil, "a refused case must name its expected reason")
        }
        let input: (body: [UInt8], boundary: [UInt8])
        do {
            input = try testCase.input()
        } catch let error as HTTPCoreError {
            #expect(testCase.verdict == "refuse", "request refused: \(error)")
            if let expected = testCase.error {
                #expect(error.reason.caseName == expected, "request Content-Type refused: \(error)")
            }
            report(testCase, "refused as expected (request Content-Type: \(error.reason))")
            return
        }
        let limits = testCase.multipartLimits
        let whole = parse(input.body, boundary: input.boundary, limits: limits)
        let bytewise = parseBytewise(input.body, boundary: input.boundary, limits: limits)
        #expect(bytewise == whole, "byte-by-byte feeding differs from whole input")
        for cuts in splitPlans(count: input.body.count) {
            let split = parse(input.body, boundary: input.boundary, limits: limits, cuts: cuts)
            #expect(split == whole, "split at \(cuts) differs from whole input")
            if split != whole { break }
        }
        if testCase.verdict == "refuse" {
            let error = try #require(whole.error, "accepted a body that must be refused")
            if let expected = testCase.error {
                #expect(error.reason.caseName == expected, "refused for another reason: \(error)")
            }
            report(testCase, "refused as expected (\(error))")
            return
        }
        if let error = whole.error {
            Issue.record("refused a valid body: \(error)")
            return
        }
        #expect(whole.ended)
        if let expected = testCase.parts {
            let count =
                testCase.partsPrefix == true ? min(whole.parts.count, expected.count) : whole.parts.count
            try #require(count == expected.count, "part count \(whole.parts.count)")
            for (part, want) in zip(whole.parts, expected) {
                #expect(part.head.nameString == want.name)
                #expect(part.head.filenameString == want.filename)
                if let type = want.contentType {
                    if type.contains(";") {
                        #expect(part.head.headers["Content-Type"] == type)
                    } else {
                        #expect(part.head.contentType?.essence == type)
                    }
                }
                if let content = want.content {
                    let encoding =
                        want.decode == nil
                        ? nil : part.head.headers["Content-Transfer-Encoding"]?.lowercased()
                    let got = decodeTransfer(part.content, encoding)
                    #expect(got == CorpusCase.bytes(content), "content of part \(want.name)")
                }
            }
        }
        if let file = testCase.filePart {
            let part = try #require(whole.parts.first { $0.head.isFile })
            #expect(part.head.nameString == file.name)
            #expect(part.head.filenameString == file.filename)
            #expect(part.head.contentType?.essence == file.contentType)
        }
        for name in testCase.anomalies ?? [] {
            #expect(whole.anomalies.contains(MultipartAnomalies(name: name)!), "anomaly \(name)")
        }
        report(testCase, "passed: \(whole.parts.count) parts \(whole.anomalies)")
    }

    private func report(_ testCase: CorpusCase, _ outcome: String) {
        let deviation =
            testCase.sourceVerdict == "valid" && testCase.verdict == "refuse"
            ? " [policy: \(testCase.why ?? "")]" : ""
        print("corpus: \(testCase.id): \(outcome)\(deviation)")
    }
}
