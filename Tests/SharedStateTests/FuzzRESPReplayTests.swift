import Foundation
import SharedState
import Testing

/// The committed inputs of the FuzzRESP target (Fuzz/Seeds/FuzzRESP and
/// Fuzz/Regressions/FuzzRESP), read whole and cut at every byte with the harness's properties
/// — the same replies and error whatever the cut, nothing held past the reply limit — so a
/// regression the fuzzer finds stays fixed in `swift test`, not only in `make fuzz`.
@Suite struct FuzzRESPReplayTests {
    static func inputs(_ kind: String) throws -> [(name: String, bytes: [UInt8])] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let directory = root.appendingPathComponent("Fuzz/\(kind)/FuzzRESP")
        return try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { !$0.hasPrefix(".") }.sorted()
            .map { ($0, [UInt8](try Data(contentsOf: directory.appendingPathComponent($0)))) }
    }

    static func read(_ pieces: [ArraySlice<UInt8>], limits: RESPLimits) -> ([RESPValue], RESPError?, Int) {
        var reader = RESPReader(limits: limits)
        var values: [RESPValue] = []
        var held = 0
        for piece in pieces {
            Array(piece).withUnsafeBytes { reader.take($0) }
            do throws(RESPError) {
                while let value = try reader.next() { values.append(value) }
            } catch {
                return (values, error, held)
            }
            held = max(held, reader.pendingBytes)
        }
        return (values, nil, held)
    }

    @Test func seedsAndRegressionsKeepTheHarnessProperties() throws {
        let seeds = try Self.inputs("Seeds")
        #expect(seeds.count >= 8, "Fuzz/Seeds/FuzzRESP holds \(seeds.count) inputs")
        for (name, input) in seeds + (try Self.inputs("Regressions")) {
            let wire = Array(input.dropFirst())
            for limits in [RESPLimits(), RESPLimits(line: 64, bulk: 256, elements: 16, depth: 2, reply: 512)]
            {
                let whole = Self.read([wire[...]], limits: limits)
                #expect(whole.2 <= limits.reply, "\(name)")
                for cut in 0...wire.count {
                    let split = Self.read([wire[..<cut], wire[cut...]], limits: limits)
                    #expect(split.0 == whole.0 && split.1 == whole.1, "\(name): cut at \(cut) differs")
                    #expect(split.2 <= limits.reply, "\(name)")
                }
            }
        }
        // The seeds are read as Redis means them.
        let answer = try #require(seeds.first { $0.name == "script-answer" })
        #expect(
            Self.read([Array(answer.bytes.dropFirst())[...]], limits: RESPLimits()).0 == [
                .array([.bulk(Array("ab12-7".utf8)), .bulk(Array("ok".utf8)), .integer(0)])
            ])
    }
}
