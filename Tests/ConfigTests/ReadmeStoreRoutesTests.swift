import Config
import Foundation
import Testing
import UploadRules

/// The README's four complete object-store routes load as written (with their secret files
/// and variables supplied), each with its provider.
@Suite struct ReadmeStoreRoutesTests {
    @Test func theReadmeRoutesLoad() throws {
        let readme = try String(
            contentsOf: DeployFilesTests.root.appendingPathComponent("README.md"), encoding: .utf8)
        let start = try #require(readme.range(of: "routes:\n  - name: s3"))
        let end = try #require(readme[start.lowerBound...].range(of: "```"))
        let directory = NSTemporaryDirectory() + "formgate-readme-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        for name in [
            "aws_access_key_id", "aws_secret_access_key", "oss_access_key_secret", "cos_secret_key",
            "qiniu_sk",
        ] {
            try "AKIAREADME\(name.count)\n".write(
                toFile: "\(directory)/\(name)", atomically: true, encoding: .utf8)
        }
        try #"{"keys":[{"kty":"oct","kid":"a","k":"Y29uZmlnLXRlc3Qtc2VjcmV0LTAxMjM0NTY3ODlhYmNkZWY"}]}"#
            .write(
                toFile: "\(directory)/jwks.json", atomically: true, encoding: .utf8)
        let routes = String(readme[start.lowerBound..<end.lowerBound])
            .replacingOccurrences(of: "/run/secrets", with: directory)
            .replacingOccurrences(of: "/etc/formgate/jwks.json", with: "\(directory)/jwks.json")
        let config = try ConfigLoader.load(
            text: routes, file: "README.md",
            environment: [
                "OSS_ACCESS_KEY_ID": "LTAI-readme", "COS_SECRET_ID": "AKID-readme", "QINIU_AK": "qiniu-ak",
            ]
        ).get()
        #expect(config.warnings.isEmpty, "\(config.warnings)")
        let kinds = config.routes.map { route in
            route.rules.inject.compactMap { injection -> String? in
                if case .provider(let provider) = injection.value { return provider.kind }
                return nil
            }
        }
        #expect(kinds == [["s3_post"], ["oss_post"], ["cos_post"], ["qiniu"]])
        #expect(config.routes.map(\.rules.lengthFollowsFile) == [true, true, true, true])
    }
}
