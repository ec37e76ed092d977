import Foundation
import Testing

@testable import MultipartParsing

/// Inputs the fuzzers found (Fuzz/Regressions/FuzzMultipart/: 4 bytes of split points, then
/// the body): every split must give the same result.
@Suite struct FuzzRegressionTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/Regressions/FuzzMultipart")

    static var inputs: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            .filter { !$0.hasPrefix(".") }.sorted()
    }

    @Test(arguments: inputs)
    func multipartRegression(_ name: String) throws {
        let bytes = [UInt8](try Data(contentsOf: Self.directory.appendingPathComponent(name)))
        let body = Array(bytes.dropFirst(4))
        _ = parseEverySplit(body, limits: MultipartLimits(parts: 50, partHeaderBytes: 512))
    }

    @Test func headerErrorsAreReportedAtTheEarliestByte() {
        // A stray CR inside a header line that is also over the header limit: the CR comes
        // first, whatever the reads.
        let input = Array(("--b0undary\r\nX-A: 1\r2" + String(repeating: "z", count: 600) + "\r\n\r\n").utf8)
        let result = parseEverySplit(input, limits: MultipartLimits(partHeaderBytes: 512))
        #expect(result.error == MultipartError(.controlCharacterInHeader, at: 18))
    }
}
