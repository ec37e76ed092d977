import Config
import Foundation
import Testing

/// `admin:` as an address or `{ listen, token_file, open_probes }`; outside loopback the token
/// is required (issue 32).
@Suite struct AdminConfigTests {
    static func tokenFile(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "formgate-admin-token-\(UUID().uuidString)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test(arguments: ["127.0.0.1:9901", "127.1.2.3:0", "localhost:9901", "[::1]:9901"])
    func aLoopbackAddressNeedsNoToken(_ address: String) throws {
        let config = try ConfigLoader.load(text: "admin: \"\(address)\"\n", file: "a.yaml").get()
        #expect(config.admin == address)
        #expect(config.adminToken == nil && !config.adminOpenProbes)
    }

    @Test(arguments: ["0.0.0.0:9901", "10.0.0.5:9901", "[::]:9901", "127.0.0.1.example:9901"])
    func anyOtherAddressWithoutATokenIsRefused(_ address: String) {
        for text in ["admin: \"\(address)\"\n", "admin: { listen: \"\(address)\" }\n"] {
            guard case .failure(let errors) = ConfigLoader.load(text: text, file: "a.yaml") else {
                Issue.record("accepted \(text)")
                continue
            }
            #expect(
                errors.errors.contains { $0.description.contains("is not on loopback") }, "\(errors)")
        }
    }

    @Test func theMappingReadsTheTokenAndOpenProbes() throws {
        let file = try Self.tokenFile("0123456789abcdef-token\n")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let config = try ConfigLoader.load(
            text: "admin: { listen: 0.0.0.0:9901, token_file: \(file), open_probes: true }\n", file: "a.yaml"
        ).get()
        #expect(config.admin == "0.0.0.0:9901")
        #expect(config.adminToken == "0123456789abcdef-token")
        #expect(config.adminOpenProbes)
    }

    @Test func aShortTokenAMissingFileAndUnknownKeysAreRefusedWithoutShowingTheToken() throws {
        let short = try Self.tokenFile("short-secret\n")
        defer { try? FileManager.default.removeItem(atPath: short) }
        let cases = [
            "admin: { listen: 0.0.0.0:9901, token_file: \(short) }\n": "at least 16 characters",
            "admin: { listen: 0.0.0.0:9901, token_file: /nonexistent/token }\n": "cannot read",
            "admin: { listen: 127.0.0.1:9901, token: abc }\n": "unknown key",
            "admin: { token_file: \(short) }\n": "listen: is required",
        ]
        for (text, message) in cases {
            guard case .failure(let errors) = ConfigLoader.load(text: text, file: "a.yaml") else {
                Issue.record("accepted \(text)")
                continue
            }
            let all = errors.errors.map(\.description).joined(separator: "\n")
            #expect(all.contains(message), "\(text): \(all)")
            #expect(!all.contains("short-secret"))
        }
    }
}
