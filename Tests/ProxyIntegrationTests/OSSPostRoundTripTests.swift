import Foundation
import Testing

/// Aliyun OSS PostObject, V1 and V4, through FormGate to the verifying mock
/// (`Resources/oss_post_mock.py`): a client that sends no credentials uploads, and the object
/// read back is byte-exact under the templated key with the sniffed type; a wrong secret, an
/// expired policy, a key outside the policy and a file over its length range are refused.
@Suite(.serialized) struct OSSPostRoundTripTests {
    @Test(arguments: [PostObjectStore.ossV1, .ossV4], [1 << 20, 32 << 20])
    func bufferedUploadsRoundTrip(store: PostObjectStore, bytes: Int) throws {
        try store.roundTrip(bytes: bytes, requestBody: "buffer")
    }

    /// Needs stream mode to send an exact Content-Length for a provider route: OSS, like the
    /// mock, answers a chunked body with 411 MissingContentLength.
    @Test(arguments: [PostObjectStore.ossV1, .ossV4])
    func streamedUploadsRoundTrip(store: PostObjectStore) throws {
        try store.roundTrip(bytes: 1 << 20, requestBody: "stream")
    }

    @Test(arguments: [PostObjectStore.ossV1, .ossV4])
    func theSecurityTokenAndSuccessStatusArrive(store: PostObjectStore) throws {
        try store.carriesTheSecurityToken()
    }

    @Test(arguments: [PostObjectStore.ossV1, .ossV4])
    func aWrongSecretIsRefused(store: PostObjectStore) throws {
        try store.refusesAWrongSecret()
    }

    @Test(arguments: [PostObjectStore.ossV1, .ossV4])
    func anExpiredPolicyIsRefused(store: PostObjectStore) throws {
        try store.refusesAnExpiredPolicy()
    }

    @Test(arguments: [PostObjectStore.ossV1, .ossV4])
    func aKeyOutsideThePolicyIsRefused(store: PostObjectStore) throws {
        try store.refusesAKeyOutsideThePolicy()
    }

    @Test(arguments: [PostObjectStore.ossV1, .ossV4])
    func aFileOverTheLengthRangeIsRefused(store: PostObjectStore) throws {
        try store.refusesAFileOverTheLengthRange()
    }

    @Test func chunkedBodiesAndFieldsAfterTheFileAreRefused() throws {
        try PostObjectStore.ossV1.refusesChunkedBodiesAndFieldsAfterTheFile()
    }

    /// The mock itself on issue 15's V1 vector (Aliyun's example: secret, base64 policy with
    /// `{"A":"a"}` and `{"key":"ABC"}`, signature): accepted an hour before the policy's
    /// expiration (2013-12-01T12:00:00Z), refused when a condition's field or the signature
    /// differs.
    @Test func theMockAcceptsAliyunsV1Example() throws {
        let mock = try PostObjectMock(
            script: "oss_post_mock.py", accessKey: "example-id",
            secretKey: "OtxrzxIsfpFjA7SwPzILwy8Bw21TLhquhboDYROV",
            bucket: "ahaha", clockOffset: 1_385_899_200 - 3600 - Int(Date().timeIntervalSince1970))
        defer { mock.stop() }
        let file = try pngFile(bytes: 4096)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let policy =
            "eyJjb25kaXRpb25zIjpbWyJjb250ZW50LWxlbmd0aC1yYW5nZSIsMCwxMDQ4NTc2MF0seyJidWNrZXQiOiJhaGFoYSJ9LHsiQSI6ImEifSx7ImtleSI6IkFCQyJ9XSwiZXhwaXJhdGlvbiI6IjIwMTMtMTItMDFUMTI6MDA6MDBaIn0="
        func post(field: String, signature: String = "W835KpLsL6k1/oo28RcsEflB6hw=") throws -> FormPostAnswer
        {
            let fields = [
                ("key", "ABC"), ("A", field), ("OSSAccessKeyId", "example-id"), ("policy", policy),
                ("Signature", signature),
            ]
            return try postForm(
                mock.url + "/", fields: fields, file: file.path, filename: "a.png", type: "image/png")
        }
        let accepted = try post(field: "a")
        #expect(accepted.status == 204, "\(accepted.body)")
        let condition = try post(field: "b")
        #expect(condition.status == 403 && condition.errorCode == "AccessDenied", "\(condition.body)")
        let signature = try post(field: "a", signature: "W835KpLsL6k1/oo28RcsEflB6hX=")
        #expect(
            signature.status == 403 && signature.errorCode == "SignatureDoesNotMatch", "\(signature.body)")
        #expect(try mock.keys() == ["ABC"])
        #expect(try mock.object("ABC").sha256 == file.sha256)
    }
}
