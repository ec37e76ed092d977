import Foundation
import HTTPCore
import Inspection
import Testing

/// The committed inputs of the FuzzStrip target (Fuzz/Seeds/FuzzStrip and
/// Fuzz/Regressions/FuzzStrip): each is stripped whole and split at every 7th byte, with the harness's properties — the
/// same output and report, blank mode keeps the length — so a regression found by the fuzzer
/// stays fixed in `swift test`, not only in `make fuzz`.
@Suite struct FuzzStripReplayTests {
    static func inputs(_ kind: String) throws -> [(name: String, bytes: [UInt8])] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let directory = root.appendingPathComponent("Fuzz/\(kind)/FuzzStrip")
        return try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { !$0.hasPrefix(".") }.sorted()
            .map { ($0, [UInt8](try Data(contentsOf: directory.appendingPathComponent($0)))) }
    }

    static func check(_ name: String, _ input: [UInt8]) {
        guard let control = input.first else { return }
        let format = ImageFormat.allCases[Int(control & 3)]
        let options = StripOptions(
            mode: control & 4 == 0 ? .blank : .remove, keepOrientation: control & 8 != 0,
            keepICC: control & 16 == 0)
        let file = Array(input.dropFirst())
        let whole = MetadataStripper.strip(file, format: format, options: options)
        if options.mode == .blank || format == .heic {
            #expect(whole.count == file.count, "\(name): blank mode changed the length")
        }
        for cut in stride(from: 1, to: file.count, by: 7) {
            var stripper = MetadataStripper(format: format, options: options)
            var sink = ByteArraySink()
            stripper.write(Array(file[..<cut]), into: &sink)
            stripper.write(Array(file[cut...]), into: &sink)
            stripper.finish(into: &sink)
            #expect(sink.bytes == whole, "\(name): split at \(cut) differs")
        }
    }

    @Test func seedsAndRegressionsKeepTheHarnessProperties() throws {
        let seeds = try Self.inputs("Seeds")
        #expect(seeds.count >= 8, "Fuzz/Seeds/FuzzStrip holds \(seeds.count) inputs")
        for (name, bytes) in seeds + (try Self.inputs("Regressions")) { Self.check(name, bytes) }
    }
}
