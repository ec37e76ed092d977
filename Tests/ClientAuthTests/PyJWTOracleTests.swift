import ClientAuth
import Foundation
import Testing

/// The independent oracle: PyJWT (Debian python3-jwt) with python-cryptography makes keys
/// and tokens at test time (Resources/pyjwt_oracle.py); every token's verdict must match.
/// Fails, not skips, when Python, PyJWT or cryptography is missing.
@Suite struct PyJWTOracleTests {
    struct Oracle {
        var now: Int64
        var settings: JWTVerifier.Settings
        var jwks: [UInt8]
        var cases: [(name: String, token: String, expect: String)]
    }

    func runOracle() throws -> Oracle {
        let python = ProcessInfo.processInfo.environment["FORMGATE_PYTHON"] ?? "/usr/bin/python3"
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Resources/pyjwt_oracle.py").path
        let output = FileManager.default.temporaryDirectory
            .appendingPathComponent("pyjwt-oracle-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).json")
        defer { try? FileManager.default.removeItem(at: output) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, output.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "pyjwt_oracle.py failed: \(message)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: output)) as? [String: Any])
        let now = try #require(document["now"] as? Int)
        let settings = JWTVerifier.Settings(
            issuer: try #require(document["issuer"] as? String),
            audiences: [try #require(document["audience"] as? String)],
            leeway: Int64(try #require(document["leeway"] as? Int)))
        let jwks = try JSONSerialization.data(withJSONObject: try #require(document["jwks"]))
        let cases = try #require(document["cases"] as? [[String: String]]).map { entry in
            (name: entry["name"] ?? "", token: entry["token"] ?? "", expect: entry["expect"] ?? "")
        }
        return Oracle(now: Int64(now), settings: settings, jwks: Array(jwks), cases: cases)
    }

    @Test func verdictsMatchPyJWT() throws {
        let oracle = try runOracle()
        let keys = try JWKSet(json: oracle.jwks)
        // PyJWT's JWKS: oct, RSA, EC P-256, EC P-384, OKP Ed25519, and a P-256 key whose x
        // PyJWT wrote a byte short, all usable.
        #expect(keys.keys.map(\.keyType) == ["oct", "RSA", "EC", "EC", "OKP", "EC"])
        #expect(keys.skipped.isEmpty)
        let verifier = JWTVerifier(keys: keys, settings: oracle.settings)
        #expect(oracle.cases.count >= 60)
        var accepted = 0
        var algorithms: Set<JWSAlgorithm> = []
        for entry in oracle.cases {
            let outcome = verifier.verify(Array(entry.token.utf8), now: oracle.now)
            switch (entry.expect, outcome) {
            case ("accept", .success(let token)):
                accepted += 1
                algorithms.insert(token.algorithm)
                #expect(token.subject == "user-42", "\(entry.name)")
                #expect(token.claim(named: "iss") == "https://id.example.com", "\(entry.name)")
            case ("accept", .failure(let reason)):
                Issue.record("\(entry.name): refused (\(reason.rawValue)), PyJWT made it valid")
            case ("reject", .success):
                Issue.record("\(entry.name): accepted, must be refused")
            case ("reject", .failure):
                break
            case (let expected, .success):
                Issue.record("\(entry.name): accepted, must be refused with \(expected)")
            case (let expected, .failure(let reason)):
                #expect(reason.rawValue == expected, "\(entry.name)")
            }
        }
        #expect(accepted == 14)
        #expect(
            algorithms == [.hs256, .hs384, .hs512, .rs256, .rs384, .rs512, .ps256, .es256, .es384, .edDSA])
    }
}
