import Foundation
import HTTPCore
import Testing
import UploadRules

/// The SigV4 key chain and POST-policy signature against published vectors.
@Suite struct SigV4Tests {
    /// AWS S3 API Reference, "Example: Browser-Based Upload using HTTP POST (Using AWS
    /// Signature Version 4)": the sample policy, written with CRLF line ends, its base64 and
    /// signature as the page prints them.
    static let awsExamplePolicyLines = [
        #"{ "expiration": "2015-12-30T12:00:00.000Z","#,
        #"  "conditions": ["#,
        #"    {"bucket": "sigv4examplebucket"},"#,
        #"    ["starts-with", "$key", "user/user1/"],"#,
        #"    {"acl": "public-read"},"#,
        #"    {"success_action_redirect": "http://sigv4examplebucket.s3.amazonaws.com/successful_upload.html"},"#,
        #"    ["starts-with", "$Content-Type", "image/"],"#,
        #"    {"x-amz-meta-uuid": "14365123651274"},"#,
        #"    {"x-amz-server-side-encryption": "AES256"},"#,
        #"    ["starts-with", "$x-amz-meta-tag", ""],"#,
        "",
        #"    {"x-amz-credential": "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request"},"#,
        #"    {"x-amz-algorithm": "AWS4-HMAC-SHA256"},"#,
        #"    {"x-amz-date": "20151229T000000Z" }"#,
        "  ]",
        "}",
    ]
    static let awsExamplePolicyBase64 =
        "eyAiZXhwaXJhdGlvbiI6ICIyMDE1LTEyLTMwVDEyOjAwOjAwLjAwMFoiLA0KICAiY29uZGl0aW9ucyI6IFsNCiAgICB7ImJ1Y2tldCI6ICJzaWd2NGV4YW1wbGVidWNrZXQifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci91c2VyMS8iXSwNCiAgICB7ImFjbCI6ICJwdWJsaWMtcmVhZCJ9LA0KICAgIHsic3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiOiAiaHR0cDovL3NpZ3Y0ZXhhbXBsZWJ1Y2tldC5zMy5hbWF6b25hd3MuY29tL3N1Y2Nlc3NmdWxfdXBsb2FkLmh0bWwifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRDb250ZW50LVR5cGUiLCAiaW1hZ2UvIl0sDQogICAgeyJ4LWFtei1tZXRhLXV1aWQiOiAiMTQzNjUxMjM2NTEyNzQifSwNCiAgICB7IngtYW16LXNlcnZlci1zaWRlLWVuY3J5cHRpb24iOiAiQUVTMjU2In0sDQogICAgWyJzdGFydHMtd2l0aCIsICIkeC1hbXotbWV0YS10YWciLCAiIl0sDQoNCiAgICB7IngtYW16LWNyZWRlbnRpYWwiOiAiQUtJQUlPU0ZPRE5ON0VYQU1QTEUvMjAxNTEyMjkvdXMtZWFzdC0xL3MzL2F3czRfcmVxdWVzdCJ9LA0KICAgIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwNCiAgICB7IngtYW16LWRhdGUiOiAiMjAxNTEyMjlUMDAwMDAwWiIgfQ0KICBdDQp9"

    /// aws-sdk-php `tests/S3/PostObjectV4Test.php` (`testSignsPostPolicy`): the SDK's compact
    /// policy (`{"expiration":"2015-12-29T01:00:00Z",…}`, slashes escaped as PHP writes them)
    /// and its signature, same credentials, signed on 2015-12-29 in us-east-1.
    static let phpSDKPolicyBase64 =
        "eyJleHBpcmF0aW9uIjoiMjAxNS0xMi0yOVQwMTowMDowMFoiLCJjb25kaXRpb25zIjpbeyJidWNrZXQiOiJzaWd2NGV4YW1wbGVidWNrZXQifSxbInN0YXJ0cy13aXRoIiwiJGtleSIsInVzZXJcL3VzZXIxXC8iXSx7ImFjbCI6InB1YmxpYy1yZWFkIn0seyJzdWNjZXNzX2FjdGlvbl9yZWRpcmVjdCI6Imh0dHA6XC9cL3NpZ3Y0ZXhhbXBsZWJ1Y2tldC5zMy5hbWF6b25hd3MuY29tXC9zdWNjZXNzZnVsX3VwbG9hZC5odG1sIn0sWyJzdGFydHMtd2l0aCIsIiRDb250ZW50LVR5cGUiLCJpbWFnZVwvIl0seyJ4LWFtei1tZXRhLXV1aWQiOiIxNDM2NTEyMzY1MTI3NCJ9LHsieC1hbXotc2VydmVyLXNpZGUtZW5jcnlwdGlvbiI6IkFFUzI1NiJ9LFsic3RhcnRzLXdpdGgiLCIkeC1hbXotbWV0YS10YWciLCIiXSx7IlgtQW16LURhdGUiOiIyMDE1MTIyOVQwMDAwWiJ9LHsiWC1BbXotQ3JlZGVudGlhbCI6IkFLSUFJT1NGT0ROTjdFWEFNUExFXC8yMDE1MTIyOVwvdXMtZWFzdC0xXC9zM1wvYXdzNF9yZXF1ZXN0In0seyJYLUFtei1BbGdvcml0aG0iOiJBV1M0LUhNQUMtU0hBMjU2In1dfQ=="

    static let accessKey = "AKIAIOSFODNN7EXAMPLE"
    static let secretKey = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

    @Test func awsDocumentationPostExample() {
        let text = Self.awsExamplePolicyLines.joined(separator: "\r\n")
        // The copied text and the copied base64 agree, so the vector is the page's policy.
        #expect(Base64.encoded(Array(text.utf8)) == Self.awsExamplePolicyBase64)
        #expect(
            Self.awsExamplePolicyBase64.hasPrefix(
                "eyAiZXhwaXJhdGlvbiI6ICIyMDE1LTEyLTMwVDEyOjAwOjAwLjAwMFoiLA0K"))
        let signer = SigV4.aws(region: "us-east-1")
        #expect(
            signer.signature(
                secret: Self.secretKey, date: "20151229", stringToSign: Self.awsExamplePolicyBase64)
                == "8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e")
        #expect(
            signer.credential(accessKey: Self.accessKey, date: "20151229")
                == "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request")
        #expect(signer.algorithm == "AWS4-HMAC-SHA256")
        // 2015-12-29T00:00:00Z, the page's x-amz-date.
        #expect(PostPolicyTime.dateTime(1_451_347_200) == "20151229T000000Z")
        #expect(PostPolicyTime.date(1_451_347_200) == "20151229")
        // Its expiration, written the way the page writes it.
        #expect(PostPolicyTime.expiration(1_451_476_800) == "2015-12-30T12:00:00.000Z")
    }

    @Test func phpSDKPostObjectV4Vector() {
        let policy = String(decoding: Data(base64Encoded: Self.phpSDKPolicyBase64) ?? Data(), as: UTF8.self)
        #expect(policy.hasPrefix(#"{"expiration":"2015-12-29T01:00:00Z","#))
        #expect(
            SigV4.aws(region: "us-east-1").signature(
                secret: Self.secretKey, date: "20151229", stringToSign: Self.phpSDKPolicyBase64)
                == "683963a1575bb197c642490ac60f3f08cda08233cd3a163ad31b554e9327a3ff")
    }

    /// AWS General Reference, "Examples of how to derive a signing key for Signature
    /// Version 4": 20120215, us-east-1, iam.
    @Test func derivedSigningKeyVector() {
        let key = SigV4.aws(region: "us-east-1", service: "iam")
            .signingKey(secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", date: "20120215")
        #expect(Hex.encode(key) == "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d")
    }

    /// RFC 4231 test case 2.
    @Test func hmacSHA256() {
        let mac = SigV4.hmacSHA256(key: Array("Jefe".utf8), data: Array("what do ya want for nothing?".utf8))
        #expect(Hex.encode(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    /// OSS V4 reuses the chain with its own prefix, terminator and service: the key is the
    /// chain over `aliyun_v4` + secret ending in `aliyun_v4_request`.
    @Test func ossV4Parameters() {
        let oss = SigV4.ossV4(region: "cn-hangzhou")
        #expect(oss.algorithm == "OSS4-HMAC-SHA256")
        #expect(oss.scope(date: "20231203") == "20231203/cn-hangzhou/oss/aliyun_v4_request")
        #expect(
            oss.credential(accessKey: "LTAI", date: "20231203")
                == "LTAI/20231203/cn-hangzhou/oss/aliyun_v4_request")
        var key = Array("aliyun_v4secret".utf8)
        for element in ["20231203", "cn-hangzhou", "oss", "aliyun_v4_request"] {
            key = SigV4.hmacSHA256(key: key, data: Array(element.utf8))
        }
        #expect(oss.signingKey(secret: "secret", date: "20231203") == key)
        let aws = SigV4(
            algorithm: "AWS4-HMAC-SHA256", keyPrefix: "AWS4", terminator: "aws4_request",
            region: "cn-hangzhou",
            service: "oss")
        #expect(aws.signingKey(secret: "secret", date: "20231203") != key)
    }

    @Test(arguments: [
        (Int64(0), "19700101T000000Z", "1970-01-01T00:00:00.000Z"),
        (951_868_799, "20000229T235959Z", "2000-02-29T23:59:59.000Z"),
        (1_709_251_199, "20240229T235959Z", "2024-02-29T23:59:59.000Z"),
        (4_102_444_800, "21000101T000000Z", "2100-01-01T00:00:00.000Z"),
        (-1, "19691231T235959Z", "1969-12-31T23:59:59.000Z"),
    ])
    func dates(seconds: Int64, timestamp: String, expiration: String) {
        #expect(PostPolicyTime.dateTime(seconds) == timestamp)
        #expect(PostPolicyTime.date(seconds) == String(timestamp.prefix(8)))
        #expect(PostPolicyTime.expiration(seconds) == expiration)
    }
}
