import Config
import Foundation
import HTTPCore
import Testing
import UploadRules

/// Credentials read from files (`secret_key_file: PATH`): the file's one line, read at every
/// load; errors name the file and never what it holds.
@Suite struct SecretFileConfigTests {
    static func file(_ content: String) throws -> String {
        let path = NSTemporaryDirectory() + "formgate-secret-\(UUID().uuidString)"
        try content.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    static func load(_ provider: String) -> Result<ServerConfig, ConfigErrors> {
        ConfigLoader.load(
            text: """
                routes:
                  - match: { path: /u }
                    request_body: buffer
                    multipart:
                      inject: [\(provider)]

                """, file: "s.yaml")
    }

    /// The S3 signature FormGate computes with `secret` (the provider's fields, frozen clock).
    static func signature(_ config: ServerConfig) throws -> String {
        guard case .provider(let provider) = try #require(config.routes.first).rules.inject.first?.value
        else {
            throw ConfigErrors([])
        }
        var random = SecureRandom()
        var values = TemplateValues()
        values.filename = "cat.jpg"
        let context = ProviderContext(
            values: values, contentType: "image/jpeg", now: 1_451_347_200, maxFileBytes: 1 << 20)
        let fields = provider.fields(for: context, random: &random)
        return try #require(fields.first { $0.name == "x-amz-signature" }?.value)
    }

    @Test func aSecretFileSignsLikeTheSameSecretInline() throws {
        let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
        let path = try Self.file(secret + "\n")
        let keyPath = try Self.file("AKIAIOSFODNN7EXAMPLE\r\n")
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: keyPath)
        }
        let common = "region: us-east-1, bucket: b, key: \"u/{filename}\""
        let fromFile = try Self.load(
            "{ before: file, s3_post: { access_key_file: \(keyPath), secret_key_file: \(path), \(common) } }"
        ).get()
        let inline = try Self.load(
            "{ before: file, s3_post: { access_key: AKIAIOSFODNN7EXAMPLE, secret_key: \(secret), \(common) } }"
        ).get()
        #expect(try Self.signature(fromFile) == Self.signature(inline))
    }

    @Test(arguments: [
        ("qiniu: { access_key: a, secret_key_file: PATH, scope: \"p:{filename}\" }, name: token", true),
        ("oss_post: { access_key: a, secret_key_file: PATH, region: cn-hangzhou, bucket: b, key: k }", true),
        ("cos_post: { secret_id_file: PATH, secret_key_file: PATH, bucket: b-1, key: k }", true),
        (
            "s3_post: { access_key: a, secret_key: s, secret_key_file: PATH, region: us-east-1, bucket: b, key: k }",
            false
        ),
    ])
    func everyProviderReadsSecretFiles(provider: String, loads: Bool) throws {
        let path = try Self.file("the-secret-value")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = Self.load(
            "{ before: file, " + provider.replacingOccurrences(of: "PATH", with: path) + " }")
        switch result {
        case .success: #expect(loads)
        case .failure(let errors):
            #expect(!loads, "\(errors)")
            #expect(errors.description.contains("give secret_key or secret_key_file, not both"), "\(errors)")
        }
    }

    @Test(arguments: [
        ("", "is empty"),
        ("two\nlines", "control characters"),
        (String(repeating: "x", count: 70_000), "cannot read"),
    ])
    func aBadSecretFileIsRefusedWithoutItsContent(content: String, message: String) throws {
        let path = try Self.file(content)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = Self.load(
            "{ before: file, s3_post: { access_key: a, secret_key_file: \(path), region: us-east-1, bucket: b, key: k } }"
        )
        guard case .failure(let errors) = result else {
            Issue.record("loaded")
            return
        }
        #expect(
            errors.description.contains("secret_key_file: '\(path)' ")
                || errors.description.contains("secret_key_file: cannot read '\(path)'"), "\(errors)")
        #expect(errors.description.contains(message), "\(errors)")
        #expect(
            content.isEmpty || !errors.description.contains(content.prefix(8)),
            "the secret stays out of the error")
    }

    @Test func aMissingSecretFileIsNamed() {
        let result = Self.load(
            "{ before: file, s3_post: { access_key: a, secret_key_file: /nonexistent/sk, region: us-east-1, bucket: b, key: k } }"
        )
        guard case .failure(let errors) = result else {
            Issue.record("loaded")
            return
        }
        #expect(errors.description.contains("secret_key_file: cannot read '/nonexistent/sk'"), "\(errors)")
    }

    @Test func aProviderAfterTheFileIsRefused() {
        let result = Self.load(
            "{ position: last, s3_post: { access_key: a, secret_key: s, region: us-east-1, bucket: b, key: k } }"
        )
        guard case .failure(let errors) = result else {
            Issue.record("loaded")
            return
        }
        #expect(errors.description.contains("s3_post's fields must come before the file"), "\(errors)")
    }
}
