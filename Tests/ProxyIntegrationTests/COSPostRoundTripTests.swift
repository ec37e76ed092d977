import Foundation
import Testing

/// Tencent COS POST Object through FormGate to the verifying mock
/// (`Resources/cos_post_mock.py`): a client that sends no credentials uploads, and the object
/// read back is byte-exact under the templated key with the sniffed type (COS takes it from
/// the `Content-Type` field FormGate adds); a wrong secret, an expired key time, a key outside
/// the policy and a file over its length range are refused.
@Suite(.serialized) struct COSPostRoundTripTests {
    @Test(arguments: [1 << 20, 32 << 20])
    func bufferedUploadsRoundTrip(bytes: Int) throws {
        try PostObjectStore.cos.roundTrip(bytes: bytes, requestBody: "buffer")
    }

    /// Needs stream mode to send an exact Content-Length for a provider route: COS, like the
    /// mock, answers a chunked body with 411 MissingContentLength.
    @Test func streamedUploadRoundTrips() throws {
        try PostObjectStore.cos.roundTrip(bytes: 1 << 20, requestBody: "stream")
    }

    @Test func theSecurityTokenArrives() throws {
        try PostObjectStore.cos.carriesTheSecurityToken()
    }

    @Test func aWrongSecretIsRefused() throws {
        try PostObjectStore.cos.refusesAWrongSecret()
    }

    @Test func anExpiredKeyTimeIsRefused() throws {
        try PostObjectStore.cos.refusesAnExpiredPolicy()
    }

    @Test func aKeyOutsideThePolicyIsRefused() throws {
        try PostObjectStore.cos.refusesAKeyOutsideThePolicy()
    }

    @Test func aFileOverTheLengthRangeIsRefused() throws {
        try PostObjectStore.cos.refusesAFileOverTheLengthRange()
    }

    @Test func chunkedBodiesAndFieldsAfterTheFileAreRefused() throws {
        try PostObjectStore.cos.refusesChunkedBodiesAndFieldsAfterTheFile()
    }

    /// The mock itself on Tencent's POST Object example (436/14690, "signature protection"):
    /// its SecretId, SecretKey, KeyTime, policy and q-signature 7758dc9a… are accepted inside
    /// the KeyTime (the upload redirects to `success_action_redirect`, `${filename}` replaced);
    /// a key outside `starts-with folder/subfolder/`, a Content-Type outside `image/` and
    /// another signature are refused.
    @Test func theMockAcceptsTencentsExample() throws {
        let mock = try PostObjectMock(
            script: "cos_post_mock.py", accessKey: "AKIDQjz3ltompVjBni5LitkWHFlFpwkn9U5q",
            secretKey: "BQYIM75p8x0iWVFSIgqEKwFprpRSVHlz", bucket: "examplebucket-1250000000",
            clockOffset: 1_567_151_000 - Int(Date().timeIntervalSince1970))
        defer { mock.stop() }
        let file = try pngFile(bytes: 4096)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let policy =
            "ewogICAgImV4cGlyYXRpb24iOiAiMjAxOS0wOC0zMFQwOTozODoxMi40MTRaIiwKICAgICJjb25kaXRpb25zIjogWwogICAgICAgIHsgImFjbCI6ICJkZWZhdWx0IiB9LAogICAgICAgIHsgImJ1Y2tldCI6ICJleGFtcGxlYnVja2V0LTEyNTAwMDAwMDAiIH0sCiAgICAgICAgWyAic3RhcnRzLXdpdGgiLCAiJGtleSIsICJmb2xkZXIvc3ViZm9sZGVyLyIgXSwKICAgICAgICBbICJzdGFydHMtd2l0aCIsICIkQ29udGVudC1UeXBlIiwgImltYWdlLyIgXSwKICAgICAgICBbICJzdGFydHMtd2l0aCIsICIkc3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiLCAiaHR0cHM6Ly9teS53ZWJzaXRlLyIgXSwKICAgICAgICBbICJlcSIsICIkeC1jb3Mtc2VydmVyLXNpZGUtZW5jcnlwdGlvbiIsICJBRVMyNTYiIF0sCiAgICAgICAgeyAicS1zaWduLWFsZ29yaXRobSI6ICJzaGExIiB9LAogICAgICAgIHsgInEtYWsiOiAiQUtJRFFqejNsdG9tcFZqQm5pNUxpdGtXSEZsRnB3a245VTVxIiB9LAogICAgICAgIHsgInEtc2lnbi10aW1lIjogIjE1NjcxNTA2OTI7MTU2NzE1Nzg5MiIgfQogICAgXQp9"
        func post(
            key: String, type: String = "image/png",
            signature: String = "7758dc9a832e9d301dca704cacbf9d9f8172fdef"
        )
            throws -> FormPostAnswer
        {
            let fields = [
                ("key", key), ("Content-Type", type), ("acl", "default"),
                ("success_action_redirect", "https://my.website/done"),
                ("x-cos-server-side-encryption", "AES256"),
                ("q-sign-algorithm", "sha1"), ("q-ak", "AKIDQjz3ltompVjBni5LitkWHFlFpwkn9U5q"),
                ("q-key-time", "1567150692;1567157892"), ("q-signature", signature), ("policy", policy),
            ]
            return try postForm(mock.url + "/", fields: fields, file: file.path, filename: "cat.png")
        }
        let accepted = try post(key: "folder/subfolder/${filename}")
        #expect(accepted.status == 303, "\(accepted.body)")
        for refused in [
            try post(key: "other/cat.png"), try post(key: "folder/subfolder/a", type: "text/html"),
            try post(key: "folder/subfolder/a", signature: "7758dc9a832e9d301dca704cacbf9d9f8172fdee"),
        ] {
            #expect(refused.status == 403, "\(refused.body)")
        }
        #expect(try mock.keys() == ["folder/subfolder/cat.png"])
        let stored = try mock.object("folder/subfolder/cat.png")
        #expect(stored.sha256 == file.sha256 && stored.contentType == "image/png")
    }
}
