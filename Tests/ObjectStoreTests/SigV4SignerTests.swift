import ObjectStore
import Testing

/// SigV4 header signing against AWS's published example ("GET Object", S3 SigV4 documentation:
/// Authenticating Requests: Using the Authorization Header).
@Suite struct SigV4SignerTests {
    static let signer = SigV4Signer(
        region: "us-east-1", accessKey: "AKIAIOSFODNN7EXAMPLE",
        secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY")
    static let headers = [
        ("Host", "examplebucket.s3.amazonaws.com"), ("Range", "bytes=0-9"),
        ("x-amz-content-sha256", SigV4Signer.emptyPayloadHash), ("x-amz-date", "20130524T000000Z"),
    ]

    @Test func canonicalRequestOfTheGetObjectExample() {
        let (request, signed) = SigV4Signer.canonicalRequest(
            method: "GET", path: "/test.txt", query: [], headers: Self.headers,
            payloadHash: SigV4Signer.emptyPayloadHash)
        #expect(signed == "host;range;x-amz-content-sha256;x-amz-date")
        #expect(
            request == """
                GET
                /test.txt

                host:examplebucket.s3.amazonaws.com
                range:bytes=0-9
                x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                x-amz-date:20130524T000000Z

                host;range;x-amz-content-sha256;x-amz-date
                e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
                """)
        let toSign = Self.signer.stringToSign(canonicalRequest: request, amzDate: "20130524T000000Z")
        #expect(
            toSign == """
                AWS4-HMAC-SHA256
                20130524T000000Z
                20130524/us-east-1/s3/aws4_request
                7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972
                """)
    }

    @Test func authorizationOfTheGetObjectExample() {
        let authorization = Self.signer.authorization(
            method: "GET", path: "/test.txt", query: [], headers: Self.headers,
            payloadHash: SigV4Signer.emptyPayloadHash, amzDate: "20130524T000000Z")
        #expect(
            authorization
                == "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
                + "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
                + "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
    }

    /// AWS's "GET Bucket Lifecycle" example: a query parameter without a value.
    @Test func queryWithoutValueIsSignedWithEquals() {
        let (request, _) = SigV4Signer.canonicalRequest(
            method: "GET", path: "/", query: [("lifecycle", "")],
            headers: [("Host", "examplebucket.s3.amazonaws.com")], payloadHash: "x")
        #expect(request.split(separator: "\n", omittingEmptySubsequences: false)[2] == "lifecycle=")
        let authorization = Self.signer.authorization(
            method: "GET", path: "/", query: [("lifecycle", "")],
            headers: [
                ("Host", "examplebucket.s3.amazonaws.com"),
                ("x-amz-content-sha256", SigV4Signer.emptyPayloadHash), ("x-amz-date", "20130524T000000Z"),
            ], payloadHash: SigV4Signer.emptyPayloadHash, amzDate: "20130524T000000Z")
        #expect(
            authorization.hasSuffix(
                "Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543"))
    }

    @Test(arguments: [
        ("a b/c~d_e.f-g", true, "a%20b/c~d_e.f-g"),
        ("a b/c", false, "a%20b%2Fc"),
        ("é=&+", false, "%C3%A9%3D%26%2B"),
    ])
    func uriEncoding(_ text: String, _ keepSlash: Bool, _ expected: String) {
        #expect(SigV4Signer.uriEncode(text, keepSlash: keepSlash) == expected)
    }
}
