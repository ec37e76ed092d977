import Foundation
import Testing

@testable import MultipartParsing

/// The committed inputs of the FuzzMultipart target (4 bytes of split points, then the body):
/// the regressions (Fuzz/Regressions/FuzzMultipart/, inputs that once failed) must give the
/// same result at every split; the seeds (Fuzz/Seeds/FuzzMultipart/) the same result whole
/// and at the harness's two cuts. Each directory must hold at least its committed inputs: a
/// moved or emptied directory fails here instead of replaying nothing.
@Suite struct FuzzRegressionTests {
    static let limits = MultipartLimits(parts: 50, partHeaderBytes: 512)

    @Test func regressionsGiveOneResultAtEverySplit() throws {
        let inputs = try fuzzInputs("Regressions", "FuzzMultipart")
        #expect(inputs.count >= 1, "Fuzz/Regressions/FuzzMultipart holds \(inputs.count) inputs")
        for input in inputs {
            _ = parseEverySplit(Array(input.bytes.dropFirst(4)), limits: Self.limits)
        }
    }

    @Test func seedsGiveOneResultAtTheHarnessSplit() throws {
        let inputs = try fuzzInputs("Seeds", "FuzzMultipart")
        #expect(inputs.count >= 223, "Fuzz/Seeds/FuzzMultipart holds \(inputs.count) inputs")
        for input in inputs where input.bytes.count >= 4 {
            let bytes = input.bytes
            let body = Array(bytes[4...])
            let a = Int(bytes[0]) << 8 | Int(bytes[1])
            let b = Int(bytes[2]) << 8 | Int(bytes[3])
            let cuts = [a % (body.count + 1), b % (body.count + 1)].sorted()
            let boundary = Array("b0undary".utf8)
            let whole = parse(body, boundary: boundary, limits: Self.limits)
            let split = parse(body, boundary: boundary, limits: Self.limits, cuts: cuts)
            #expect(split == whole, "\(input.name): split at \(cuts) differs")
        }
    }

    @Test func headerErrorsAreReportedAtTheEarliestByte() {
        // A stray CR inside a header line that is also over the header limit: the CR comes
        // first, whatever the reads.
        let input = Array(("--b0undary\r\nX-A: 1\r2" + String(repeating: "z", count: 600) + "\r\n\r\n").utf8)
        let result = parseEverySplit(input, limits: MultipartLimits(partHeaderBytes: 512))
        #expect(result.error == MultipartError(.controlCharacterInHeader, at: 18))
    }
}

/// The committed inputs of a fuzz target, `Fuzz/<kind>/<target>/` (`Regressions` or `Seeds`),
/// sorted by file name; dot files (`.keep`) are not inputs. Throws when the directory is
/// missing.
func fuzzInputs(_ kind: String, _ target: String) throws -> [(name: String, bytes: [UInt8])] {
    let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fuzz/\(kind)/\(target)")
    return try FileManager.default.contentsOfDirectory(atPath: directory.path)
        .filter { !$0.hasPrefix(".") }.sorted()
        .map { ($0, [UInt8](try Data(contentsOf: directory.appendingPathComponent($0)))) }
}
