import Foundation
import HTTPCore
import Testing
import UploadRules

/// The S3 POST provider: its fields, their order, the policy it writes, and the settings it
/// refuses.
@Suite struct S3PostProviderTests {
    static let now: Int64 = 1_451_347_200  // 2015-12-29T00:00:00Z

    static func settings(
        key: String = "uploads/{auth:sub}/{uuid}{ext}", keyPrefix: String? = nil, sessionToken: String? = nil,
        conditions: [S3PostCondition] = []
    ) throws -> S3PostSettings {
        S3PostSettings(
            accessKey: SigV4Tests.accessKey, secretKey: SigV4Tests.secretKey, sessionToken: sessionToken,
            region: "eu-west-1", bucket: "media", key: try Template(key),
            keyPrefix: try keyPrefix.map { try Template($0) }, ttlSeconds: 600, conditions: conditions)
    }

    static func context(contentType: String? = "image/png") -> ProviderContext {
        var values = TemplateValues()
        values.ext = ".png"
        values.identity = Identity(subject: "user-42", method: .jwt)
        return ProviderContext(values: values, contentType: contentType, now: now, maxFileBytes: 1 << 20)
    }

    static func decodedPolicy(_ fields: [InjectedField]) -> String {
        let base64 = fields.first { $0.name == "policy" }?.value ?? ""
        return String(decoding: Data(base64Encoded: base64) ?? Data(), as: UTF8.self)
    }

    @Test func fieldsInBotocoreOrderWithAnExactKey() throws {
        let provider = try S3PostProvider(settings: Self.settings())
        var random = SplitMix64(seed: 7)
        let fields = provider.fields(for: Self.context(), random: &random)
        #expect(
            fields.map(\.name) == [
                "Content-Type", "key", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "policy",
                "x-amz-signature",
            ])
        let key = fields[1].value
        #expect(key.hasPrefix("uploads/user-42/") && key.hasSuffix(".png") && key.utf8.count == 16 + 36 + 4)
        #expect(fields[0].value == "image/png")
        #expect(fields[2].value == "AWS4-HMAC-SHA256")
        #expect(fields[3].value == "AKIAIOSFODNN7EXAMPLE/20151229/eu-west-1/s3/aws4_request")
        #expect(fields[4].value == "20151229T000000Z")
        #expect(
            Self.decodedPolicy(fields)
                == #"{"expiration":"2015-12-29T00:10:00.000Z","conditions":[{"bucket":"media"},"#
                + #"{"key":"\#(key)"},{"x-amz-algorithm":"AWS4-HMAC-SHA256"},"#
                + #"{"x-amz-credential":"AKIAIOSFODNN7EXAMPLE/20151229/eu-west-1/s3/aws4_request"},"#
                + #"{"x-amz-date":"20151229T000000Z"},["content-length-range",0,1048576],"#
                + #"{"Content-Type":"image/png"}]}"#)
        // The signature is SigV4 over the base64 policy, as sent.
        #expect(
            fields[6].value
                == SigV4.aws(region: "eu-west-1").signature(
                    secret: SigV4Tests.secretKey, date: "20151229", stringToSign: fields[5].value))
        #expect(fields[6].value.utf8.count == 64)
    }

    @Test func sessionTokenPrefixAndExtraConditions() throws {
        let provider = try S3PostProvider(
            settings: Self.settings(
                keyPrefix: "uploads/{auth:sub}/", sessionToken: "FQoGZXIvYXdzE//token==",
                conditions: [
                    .startsWith(field: "x-amz-meta-tag", prefix: ""), .exact(field: "acl", value: "private"),
                    .contentLengthRange(min: 10, max: 4 << 20),
                ]))
        var random = SplitMix64(seed: 1)
        let fields = provider.fields(for: Self.context(contentType: nil), random: &random)
        #expect(
            fields.map(\.name) == [
                "key", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-security-token", "policy",
                "x-amz-signature",
            ])
        #expect(fields[4].value == "FQoGZXIvYXdzE//token==")
        // Any key under the prefix; the configured range narrows [0, file_bytes] to [10, 1 MiB].
        #expect(
            Self.decodedPolicy(fields)
                == #"{"expiration":"2015-12-29T00:10:00.000Z","conditions":[{"bucket":"media"},"#
                + #"["starts-with","$key","uploads/user-42/"],{"x-amz-algorithm":"AWS4-HMAC-SHA256"},"#
                + #"{"x-amz-credential":"AKIAIOSFODNN7EXAMPLE/20151229/eu-west-1/s3/aws4_request"},"#
                + #"{"x-amz-date":"20151229T000000Z"},{"x-amz-security-token":"FQoGZXIvYXdzE//token=="},"#
                + #"["content-length-range",10,1048576],["starts-with","$x-amz-meta-tag",""],{"acl":"private"}]}"#
        )
    }

    @Test func fixedInputsGiveAFixedSignature() throws {
        let provider = try S3PostProvider(settings: Self.settings(key: "a/b.txt"))
        let first = provider.fields(
            key: "a/b.txt", keyPrefix: nil, contentType: "text/plain", now: Self.now, maxFileBytes: 5)
        let again = provider.fields(
            key: "a/b.txt", keyPrefix: nil, contentType: "text/plain", now: Self.now, maxFileBytes: 5)
        let later = provider.fields(
            key: "a/b.txt", keyPrefix: nil, contentType: "text/plain", now: Self.now + 1, maxFileBytes: 5)
        #expect(first == again)
        #expect(first.last?.value != later.last?.value)
        #expect(provider.kind == "s3_post")
        #expect(provider.templates == [try Template("a/b.txt")])
    }

    @Test func conditionJSONEscapes() {
        #expect(
            S3PostCondition.exact(field: "x-amz-meta-note", value: "a\"b\\c").json
                == #"{"x-amz-meta-note":"a\"b\\c"}"#)
        #expect(
            S3PostCondition.startsWith(field: "Content-Type", prefix: "image/").json
                == #"["starts-with","$Content-Type","image/"]"#)
        #expect(S3PostCondition.contentLengthRange(min: 1, max: 2).json == #"["content-length-range",1,2]"#)
    }

    @Test(arguments: [
        ("region", "US-East-1", nil, [S3PostCondition]()),
        ("region", "us--east", nil, []),
        ("key_prefix", "us-east-1", "other/", []),
        ("key_prefix", "us-east-1", "uploads/{auth:sub}/{uuid}", []),
        ("key_prefix", "us-east-1", "uploads/{auth:sub}/x/", []),
        ("conditions[0]", "us-east-1", nil, [.exact(field: "Key", value: "x")]),
        (
            "conditions[1]", "us-east-1", nil,
            [.exact(field: "acl", value: "private"), .startsWith(field: "x-amz-date", prefix: "")]
        ),
        ("conditions[0]", "us-east-1", nil, [.contentLengthRange(min: 5, max: 4)]),
    ])
    func refusedSettings(setting: String, region: String, keyPrefix: String?, conditions: [S3PostCondition])
        throws
    {
        var settings = try Self.settings(keyPrefix: keyPrefix, conditions: conditions)
        settings.region = region
        #expect(throws: S3PostSettings.Invalid.self) { try settings.validate() }
        do {
            _ = try S3PostProvider(settings: settings)
            Issue.record("accepted \(settings)")
        } catch {
            #expect(error.setting == setting)
        }
    }

    @Test func refusedCredentialsAndTTL() throws {
        var settings = try Self.settings()
        settings.ttlSeconds = 0
        #expect(throws: S3PostSettings.Invalid(setting: "ttl", message: "0 s is outside 1...604800 s")) {
            try settings.validate()
        }
        settings.ttlSeconds = S3PostSettings.maxTTLSeconds
        try settings.validate()
        settings.secretKey = ""
        #expect(throws: S3PostSettings.Invalid.self) { try settings.validate() }
        settings = try Self.settings(sessionToken: "")
        #expect(throws: S3PostSettings.Invalid.self) { try settings.validate() }
        settings = try Self.settings()
        settings.accessKey = "AK/X"
        #expect(throws: S3PostSettings.Invalid.self) { try settings.validate() }
    }

    @Test func descriptionKeepsSecretsOut() throws {
        let settings = try Self.settings(sessionToken: "SESSION-SECRET")
        #expect(!settings.description.contains(SigV4Tests.secretKey))
        #expect(!settings.description.contains("SESSION-SECRET"))
        #expect(settings.description.contains("AKIAIOSFODNN7EXAMPLE"))
    }

    @Test func acceptedPrefixes() throws {
        for prefix in ["uploads/", "upl", "uploads/{auth:sub}", "uploads/{auth:sub}/", ""] {
            _ = try S3PostProvider(settings: Self.settings(keyPrefix: prefix))
        }
    }

    /// S3 reads form field names in any case, so a client's `Policy` or `KEY` is FormGate's
    /// `policy` or `key` to the store: dropped like the exact names; other fields pass.
    @Test func clientFieldsOfTheProvidersNamesInAnyCaseAreDropped() throws {
        var rules = RuleSet()
        rules.inject = [
            Injection(
                name: "", position: .before("file"),
                value: .provider(try S3PostProvider(settings: Self.settings())))
        ]
        for name in ["policy", "Policy", "KEY", "X-Amz-Signature", "x-amz-CREDENTIAL", "content-type"] {
            #expect(rules.shadowsAddedField(name), "\(name)")
        }
        for name in ["acl", "x-amz-meta-tag", "file", "keys"] {
            #expect(!rules.shadowsAddedField(name), "\(name)")
        }
    }
}
