import Foundation
import HTTPCore
import Testing
import UploadRules

@Suite struct COSPostProviderTests {
    /// Tencent's POST Object document (intl.cloud.tencent.com/document/product/436/14690,
    /// "Signature protection use cases"): its example SecretKey, KeyTime and policy (the
    /// indented text its `policy` field base64-encodes) and the intermediate values it prints.
    @Test func publishedVector() throws {
        let secretKey = "BQYIM75p8x0iWVFSIgqEKwFprpRSVHlz"
        let keyTime = "1567150692;1567157892"
        let policy = """
            {
                "expiration": "2019-08-30T09:38:12.414Z",
                "conditions": [
                    { "acl": "default" },
                    { "bucket": "examplebucket-1250000000" },
                    [ "starts-with", "$key", "folder/subfolder/" ],
                    [ "starts-with", "$Content-Type", "image/" ],
                    [ "starts-with", "$success_action_redirect", "https://my.website/" ],
                    [ "eq", "$x-cos-server-side-encryption", "AES256" ],
                    { "q-sign-algorithm": "sha1" },
                    { "q-ak": "AKIDQjz3ltompVjBni5LitkWHFlFpwkn9U5q" },
                    { "q-sign-time": "1567150692;1567157892" }
                ]
            }
            """
        #expect(
            Base64.encoded(Array(policy.utf8))
                == "ewogICAgImV4cGlyYXRpb24iOiAiMjAxOS0wOC0zMFQwOTozODoxMi40MTRaIiwKICAgICJjb25kaXRpb25zIjogWwogICAgICAgIHsgImFjbCI6ICJkZWZhdWx0IiB9LAogICAgICAgIHsgImJ1Y2tldCI6ICJleGFtcGxlYnVja2V0LTEyNTAwMDAwMDAiIH0sCiAgICAgICAgWyAic3RhcnRzLXdpdGgiLCAiJGtleSIsICJmb2xkZXIvc3ViZm9sZGVyLyIgXSwKICAgICAgICBbICJzdGFydHMtd2l0aCIsICIkQ29udGVudC1UeXBlIiwgImltYWdlLyIgXSwKICAgICAgICBbICJzdGFydHMtd2l0aCIsICIkc3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiLCAiaHR0cHM6Ly9teS53ZWJzaXRlLyIgXSwKICAgICAgICBbICJlcSIsICIkeC1jb3Mtc2VydmVyLXNpZGUtZW5jcnlwdGlvbiIsICJBRVMyNTYiIF0sCiAgICAgICAgeyAicS1zaWduLWFsZ29yaXRobSI6ICJzaGExIiB9LAogICAgICAgIHsgInEtYWsiOiAiQUtJRFFqejNsdG9tcFZqQm5pNUxpdGtXSEZsRnB3a245VTVxIiB9LAogICAgICAgIHsgInEtc2lnbi10aW1lIjogIjE1NjcxNTA2OTI7MTU2NzE1Nzg5MiIgfQogICAgXQp9"
        )
        #expect(
            COSPostProvider.signKey(secretKey: secretKey, keyTime: keyTime)
                == "39acc8c9f34ba5b19bce4e965b370cd3f62d2fba")
        #expect(COSPostProvider.sha1Hex(Array(policy.utf8)) == "d5d903b8360468bc81c1311f134989bc8c8b5b89")
        #expect(
            COSPostProvider.postSignature(secretKey: secretKey, keyTime: keyTime, policy: policy)
                == "7758dc9a832e9d301dca704cacbf9d9f8172fdef")
        #expect(
            COSPostProvider.postSignature(secretKey: secretKey, keyTime: keyTime, policy: policy + " ")
                != "7758dc9a832e9d301dca704cacbf9d9f8172fdef")
    }

    /// Tencent's request-signature document (436/7778, "Uploading an object"): the SignKey
    /// of its example KeyTime, the step every COS signature shares.
    @Test func requestSignatureDocumentSignKey() {
        #expect(
            COSPostProvider.signKey(
                secretKey: "BQYIM75p8x0iWVFSIgqEKwFprpRSVHlz", keyTime: "1557989151;1557996351")
                == "eb2519b498b02ac213cb1f3d1a3d27a3b3c9bc5f")
    }

    @Test func fields() throws {
        let provider = COSPostProvider(
            secretID: "AKID-example", secretKey: "secret", securityToken: "tmp-token",
            bucket: "examplebucket-1250000000", key: try Template("uploads/{auth:sub}/{basename}{ext}"),
            ttlSeconds: 900)
        var random = SplitMix64(seed: 7)
        let fields = provider.fields(for: Self.context(contentType: "image/png"), random: &random)
        #expect(
            fields.map(\.name) == [
                "key", "policy", "q-sign-algorithm", "q-ak", "q-key-time", "q-signature",
                "x-cos-security-token",
                "Content-Type",
            ])
        let values = Dictionary(uniqueKeysWithValues: fields.map { ($0.name, $0.value) })
        #expect(values["key"] == "uploads/user-42/cat.png")
        #expect(values["q-sign-algorithm"] == "sha1")
        #expect(values["q-ak"] == "AKID-example")
        #expect(values["q-key-time"] == "1701605472;1701606432")
        #expect(values["x-cos-security-token"] == "tmp-token")
        #expect(values["Content-Type"] == "image/png")
        let encoded = try #require(values["policy"])
        let data = try #require(Data(base64Encoded: encoded))
        _ = try JSONSerialization.jsonObject(with: data)
        let policy = String(decoding: data, as: UTF8.self)
        #expect(
            policy
                == "{\"expiration\":\"2023-12-03T12:27:12.000Z\",\"conditions\":[{\"bucket\":\"examplebucket-1250000000\"},"
                + "{\"key\":\"uploads/user-42/cat.png\"},[\"content-length-range\",0,5242880],"
                + "{\"q-sign-algorithm\":\"sha1\"},{\"q-ak\":\"AKID-example\"},"
                + "{\"q-sign-time\":\"1701605472;1701606432\"},{\"Content-Type\":\"image/png\"}]}")
        #expect(
            values["q-signature"]
                == COSPostProvider.postSignature(
                    secretKey: "secret", keyTime: "1701605472;1701606432", policy: policy))
        #expect(provider.kind == "cos_post")
    }

    @Test func noContentTypeNoToken() throws {
        let provider = COSPostProvider(
            secretID: "AKID", secretKey: "secret", bucket: "b-1", key: try Template("k"), ttlSeconds: 60)
        var random = SplitMix64(seed: 1)
        let fields = provider.fields(for: Self.context(contentType: nil), random: &random)
        #expect(
            fields.map(\.name) == ["key", "policy", "q-sign-algorithm", "q-ak", "q-key-time", "q-signature"])
        let policy = String(decoding: try #require(Data(base64Encoded: fields[1].value)), as: UTF8.self)
        #expect(!policy.contains("Content-Type"))
    }

    static func context(contentType: String?) -> ProviderContext {
        var values = TemplateValues()
        values.basename = "cat"
        values.ext = ".png"
        values.identity = Identity(subject: "user-42", method: .jwt)
        return ProviderContext(
            values: values, contentType: contentType, now: 1_701_605_532, maxFileBytes: 5_242_880)
    }
}
