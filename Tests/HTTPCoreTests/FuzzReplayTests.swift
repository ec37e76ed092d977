import Foundation
import HTTPCore
import Testing

/// The committed inputs of the FuzzHeaderValues target, replayed with its property: a parsed
/// media type serializes to one with the same essence, and a parsed disposition's canonical
/// form parses again to the same name and file name (`"`, CR and LF written as `%22`, `%0D`,
/// `%0A`). Each directory must hold at least its committed inputs.
@Suite struct FuzzReplayTests {
    static func written(_ value: [UInt8]?) -> [UInt8]? {
        value.map { bytes in
            bytes.flatMap { byte -> [UInt8] in
                switch byte {
                case UInt8(ascii: "\""): Array("%22".utf8)
                case 0x0D: Array("%0D".utf8)
                case 0x0A: Array("%0A".utf8)
                default: [byte]
                }
            }
        }
    }

    static func check(_ name: String, _ bytes: [UInt8]) {
        if let type = try? MediaType.parse(bytes) {
            let again = try? MediaType.parse(type.serialized)
            #expect(again?.essence == type.essence, "\(name): media type does not survive serialization")
        }
        if let disposition = try? ContentDisposition.parse(bytes) {
            let reparsed = try? ContentDisposition.parse(disposition.serialized)
            #expect(
                reparsed?.name == written(disposition.name), "\(name): name does not survive serialization")
            #expect(
                reparsed?.filename == written(disposition.filename),
                "\(name): filename does not survive serialization")
        }
    }

    @Test(arguments: [("Regressions", 1), ("Seeds", 138)])
    func headerValuesInputsKeepTheProperty(kind: String, committed: Int) throws {
        let inputs = try fuzzInputs(kind, "FuzzHeaderValues")
        #expect(inputs.count >= committed, "Fuzz/\(kind)/FuzzHeaderValues holds \(inputs.count) inputs")
        for input in inputs { Self.check(input.name, input.bytes) }
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
