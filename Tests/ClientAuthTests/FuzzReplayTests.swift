import ClientAuth
import Foundation
import Testing

/// The committed inputs of the FuzzJWT target, replayed with its property: the same verdict
/// twice, nothing verified that was not signed with a secret no input knows, a loaded key set
/// never empty, and the JSON parser never traps. Each directory must hold at least its
/// committed inputs: a moved or emptied directory fails here instead of replaying nothing.
@Suite struct FuzzReplayTests {
    @Test(arguments: [("Regressions", 0), ("Seeds", 53)])
    func jwtInputsKeepTheProperty(kind: String, committed: Int) throws {
        let inputs = try fuzzInputs(kind, "FuzzJWT")
        #expect(inputs.count >= committed, "Fuzz/\(kind)/FuzzJWT holds \(inputs.count) inputs")
        let secret = Array("fuzz-secret-that-no-input-knows-0123456789".utf8)
        let verifier = JWTVerifier(
            keys: JWKSet(keys: [try JWK.sharedSecret(secret)]), settings: .init(leeway: 30))
        for (name, bytes) in inputs {
            let first = verifier.verify(bytes, now: 1_800_000_000)
            #expect(verifier.verify(bytes, now: 1_800_000_000) == first, "\(name): the verdict changed")
            if case .success = first { Issue.record("\(name): a token no one signed was accepted") }
            if let set = try? JWKSet(json: bytes) {
                #expect(!set.keys.isEmpty, "\(name): a key set loaded with no usable key")
            }
            _ = try? JSONParser().parse(bytes)
        }
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
