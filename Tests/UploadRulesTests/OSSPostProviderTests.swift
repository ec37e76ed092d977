import Foundation
import HTTPCore
import Testing
import UploadRules

@Suite struct OSSPostProviderTests {
    /// The V1 vector of issue 15 (also Aliyun's SDK docs and `aliyun_oss`'s doctest): the
    /// policy text below, base64, signed with the secret.
    @Test func v1PublishedVector() {
        let policy =
            "{\"conditions\":[[\"content-length-range\",0,10485760],{\"bucket\":\"ahaha\"},{\"A\":\"a\"},{\"key\":\"ABC\"}],\"expiration\":\"2013-12-01T12:00:00Z\"}"
        let encoded = Base64.encoded(Array(policy.utf8))
        #expect(
            encoded
                == "eyJjb25kaXRpb25zIjpbWyJjb250ZW50LWxlbmd0aC1yYW5nZSIsMCwxMDQ4NTc2MF0seyJidWNrZXQiOiJhaGFoYSJ9LHsiQSI6ImEifSx7ImtleSI6IkFCQyJ9XSwiZXhwaXJhdGlvbiI6IjIwMTMtMTItMDFUMTI6MDA6MDBaIn0="
        )
        #expect(
            OSSPostProvider.v1Signature(
                secretKey: "OtxrzxIsfpFjA7SwPzILwy8Bw21TLhquhboDYROV", policy: encoded)
                == "W835KpLsL6k1/oo28RcsEflB6hw=")
        // One byte of the secret or of the policy off, another signature.
        #expect(
            OSSPostProvider.v1Signature(
                secretKey: "OtxrzxIsfpFjA7SwPzILwy8Bw21TLhquhboDYROv", policy: encoded)
                != "W835KpLsL6k1/oo28RcsEflB6hw=")
    }

    /// The V4 pieces as oss2 2.19.1 made them (`ProviderAuthV4`'s signing key over the same
    /// string; OSSCOSOracleTests asks the SDK live, this pins the value).
    @Test func v4SignatureAsOSS2Computed() {
        #expect(
            OSSPostProvider.v4Signature(
                secretKey: "SK", date: "20231203", region: "cn-hangzhou", policy: "abc")
                == "6ac1ff63276c5a436c69cb4b032919ea260fa9153a4d9569fce002f71bd2499f")
        #expect(
            OSSPostProvider.v4Credential(accessKey: "AK", date: "20231203", region: "cn-hangzhou")
                == "AK/20231203/cn-hangzhou/oss/aliyun_v4_request")
    }

    @Test func policyTimes() {
        #expect(PostPolicyTime.expiration(1_385_899_200) == "2013-12-01T12:00:00.000Z")
        #expect(PostPolicyTime.expiration(1_701_605_532) == "2023-12-03T12:12:12.000Z")
        #expect(PostPolicyTime.date(1_701_605_532) == "20231203")
        #expect(PostPolicyTime.dateTime(1_701_605_532) == "20231203T121212Z")
        #expect(PostPolicyTime.dateTime(951_868_799) == "20000229T235959Z")
        #expect(PostPolicyTime.dateTime(0) == "19700101T000000Z")
    }

    @Test func v1Fields() throws {
        let provider = OSSPostProvider(
            version: .v1, accessKey: "LTAI-example", secretKey: "secret", securityToken: "sts/token+1",
            region: "cn-hangzhou", bucket: "photos", key: try Template("uploads/{auth:sub}/{basename}{ext}"),
            ttlSeconds: 600, successActionStatus: "201")
        var random = SplitMix64(seed: 7)
        let fields = provider.fields(for: Self.context(), random: &random)
        #expect(
            fields.map(\.name) == [
                "key", "OSSAccessKeyId", "policy", "Signature", "x-oss-security-token",
                "success_action_status",
            ])
        let values = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.value) })
        #expect(values["key"] == "uploads/user-42/cat \"1\".png")
        #expect(values["OSSAccessKeyId"] == "LTAI-example")
        #expect(values["x-oss-security-token"] == "sts/token+1")
        #expect(values["success_action_status"] == "201")
        let policy = try #require(values["policy"])
        #expect(
            try Self.decoded(policy)
                == "{\"expiration\":\"2023-12-03T12:22:12.000Z\",\"conditions\":[{\"bucket\":\"photos\"},"
                + "{\"key\":\"uploads/user-42/cat \\\"1\\\".png\"},[\"content-length-range\",0,10485760],"
                + "{\"success_action_status\":\"201\"}]}")
        #expect(values["Signature"] == OSSPostProvider.v1Signature(secretKey: "secret", policy: policy))
    }

    @Test func v4Fields() throws {
        let provider = OSSPostProvider(
            version: .v4, accessKey: "LTAI-example", secretKey: "secret", securityToken: "sts-token",
            region: "cn-hangzhou", bucket: "photos", key: try Template("u/{basename}{ext}"), ttlSeconds: 3600)
        var random = SplitMix64(seed: 7)
        let fields = provider.fields(for: Self.context(), random: &random)
        #expect(
            fields.map(\.name) == [
                "key", "policy", "x-oss-signature-version", "x-oss-credential", "x-oss-date",
                "x-oss-signature",
                "x-oss-security-token",
            ])
        let values = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.value) })
        #expect(values["x-oss-signature-version"] == "OSS4-HMAC-SHA256")
        #expect(values["x-oss-credential"] == "LTAI-example/20231203/cn-hangzhou/oss/aliyun_v4_request")
        #expect(values["x-oss-date"] == "20231203T121212Z")
        let policy = try #require(values["policy"])
        #expect(
            try Self.decoded(policy)
                == "{\"expiration\":\"2023-12-03T13:12:12.000Z\",\"conditions\":[{\"bucket\":\"photos\"},"
                + "{\"key\":\"u/cat \\\"1\\\".png\"},[\"content-length-range\",0,10485760],"
                + "{\"x-oss-signature-version\":\"OSS4-HMAC-SHA256\"},"
                + "{\"x-oss-credential\":\"LTAI-example/20231203/cn-hangzhou/oss/aliyun_v4_request\"},"
                + "{\"x-oss-date\":\"20231203T121212Z\"},{\"x-oss-security-token\":\"sts-token\"}]}")
        #expect(
            values["x-oss-signature"]
                == OSSPostProvider.v4Signature(
                    secretKey: "secret", date: "20231203", region: "cn-hangzhou", policy: policy))
        #expect(values["x-oss-signature"]?.count == 64)
    }

    @Test func endpointRegionSpelling() throws {
        let provider = OSSPostProvider(
            version: .v4, accessKey: "AK", secretKey: "SK", region: "oss-cn-hangzhou", bucket: "b",
            key: try Template("k"), ttlSeconds: 60)
        #expect(provider.region == "cn-hangzhou")
        var random = SplitMix64(seed: 7)
        let fields = provider.fields(for: Self.context(), random: &random)
        #expect(
            fields.first { $0.name == "x-oss-credential" }?.value
                == "AK/20231203/cn-hangzhou/oss/aliyun_v4_request")
    }

    @Test func templateRenderedOnceForFieldAndPolicy() throws {
        let provider = OSSPostProvider(
            version: .v4, accessKey: "AK", secretKey: "SK", region: "cn-beijing", bucket: "b",
            key: try Template("{uuid}{ext}"), ttlSeconds: 60)
        var random = SplitMix64(seed: 7)
        let fields = provider.fields(for: Self.context(), random: &random)
        let key = try #require(fields.first { $0.name == "key" }?.value)
        #expect(key.count == 36 + 4)
        let policy = try Self.decoded(try #require(fields.first { $0.name == "policy" }?.value))
        #expect(policy.contains("{\"key\":\"\(key)\"}"))
        #expect(provider.kind == "oss_post")
        #expect(provider.templates == [try Template("{uuid}{ext}")])
    }

    /// OSS stores the object with a client's `x-oss-content-type` (or `Content-Type`) field over
    /// the file part's type (FormGate's final, sniffed one), so a route with `oss_post` drops
    /// those fields as it drops a client's policy; other metadata fields still pass.
    @Test func aClientContentTypeFieldIsDropped() throws {
        let provider = OSSPostProvider(
            version: .v1, accessKey: "AK", secretKey: "SK", region: "cn-hangzhou", bucket: "b",
            key: try Template("{uuid}{ext}"), ttlSeconds: 60)
        var rules = RuleSet()
        rules.inject = [Injection(name: "", position: .before("file"), value: .provider(provider))]
        #expect(rules.shadowsAddedField("x-oss-content-type"))
        #expect(rules.shadowsAddedField("Content-Type"))
        #expect(rules.shadowsAddedField("policy"))
        #expect(!rules.shadowsAddedField("x-oss-meta-album"))
        var random = SplitMix64(seed: 7)
        #expect(
            !provider.fields(for: Self.context(), random: &random).contains {
                $0.name == "x-oss-content-type" || $0.name == "Content-Type"
            })
    }

    /// OSS and COS policies need not cover every field (S3's must): the client's store-control
    /// fields are dropped, its user metadata and other fields pass.
    @Test func storeControlFieldsOfTheClientAreDropped() throws {
        let oss = OSSPostProvider(
            version: .v4, accessKey: "AK", secretKey: "SK", region: "cn-hangzhou", bucket: "b",
            key: try Template("{uuid}{ext}"), ttlSeconds: 60)
        let cos = COSPostProvider(
            secretID: "ID", secretKey: "SK", bucket: "b-125", key: try Template("{uuid}{ext}"), ttlSeconds: 60
        )
        for (provider, dropped, kept) in [
            (
                oss as any TokenProvider,
                [
                    "x-oss-object-acl", "X-OSS-Storage-Class", "x-oss-forbid-overwrite", "x-oss-tagging",
                    "callback",
                    "callback-var", "success_action_redirect", "Success_Action_Status",
                ],
                ["x-oss-meta-album", "title", "x-cos-acl", "file"]
            ),
            (
                cos as any TokenProvider,
                [
                    "x-cos-acl", "x-cos-storage-class", "X-Cos-Server-Side-Encryption",
                    "success_action_redirect",
                ],
                ["x-cos-meta-album", "title", "callback", "x-oss-object-acl"]
            ),
        ] {
            var rules = RuleSet()
            rules.inject = [Injection(name: "", position: .before("file"), value: .provider(provider))]
            for name in dropped { #expect(rules.shadowsAddedField(name), "\(provider.kind) drops \(name)") }
            for name in kept { #expect(!rules.shadowsAddedField(name), "\(provider.kind) keeps \(name)") }
        }
    }

    static func context() -> ProviderContext {
        var values = TemplateValues()
        values.basename = "cat \"1\""
        values.ext = ".png"
        values.identity = Identity(subject: "user-42", method: .jwt)
        return ProviderContext(
            values: values, contentType: "image/png", now: 1_701_605_532, maxFileBytes: 10_485_760)
    }

    /// The policy text of a base64 `policy` field, checked to be JSON.
    static func decoded(_ policy: String) throws -> String {
        let data = try #require(Data(base64Encoded: policy))
        _ = try JSONSerialization.jsonObject(with: data)
        return String(decoding: data, as: UTF8.self)
    }
}
