import Foundation
import Testing

/// The object-store providers through the binary: the fields they add arrive before the file
/// in the order the vendors' SDKs give them, the client's own `policy` and signature are
/// dropped, and the file goes last.
@Suite(.serialized) struct StoreProviderTests {
    @Test(arguments: [
        (
            "s3_post: { access_key: AKIAIOSFODNN7EXAMPLE, secret_key: secret, region: us-east-1, bucket: photos, key: \"u/{filename}\" }",
            [
                "Content-Type", "key", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "policy",
                "x-amz-signature", "file",
            ]
        ),
        (
            "oss_post: { access_key: AK, secret_key: S, region: cn-hangzhou, bucket: photos, key: \"u/{filename}\" }",
            [
                "key", "policy", "x-oss-signature-version", "x-oss-credential", "x-oss-date",
                "x-oss-signature", "file",
            ]
        ),
        (
            "cos_post: { secret_id: ID, secret_key: S, bucket: photos-125, key: \"u/{filename}\" }",
            [
                "key", "policy", "q-sign-algorithm", "q-ak", "q-key-time", "q-signature", "Content-Type",
                "file",
            ]
        ),
    ])
    func fieldsArriveBeforeTheFileInTheSDKsOrder(provider: String, order: [String]) throws {
        let upstream = try FakeUpstream(.answer("HTTP/1.1 204 No Content\r\n\r\n"))
        let proxy = try startProxy(
            """
            upstream: \(upstream.url)
            routes:
              - match: { path: /upload }
                request_body: buffer
                multipart:
                  inject: [{ before: file, \(provider) }]

            """, workers: 1)
        defer { proxy.stop() }
        let body =
            "--b0\r\nContent-Disposition: form-data; name=\"policy\"\r\n\r\nforged-policy\r\n--b0\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cat.jpg\"\r\nContent-Type: image/jpeg\r\n\r\nmeow\r\n--b0--\r\n"
        let client = try RawClient(port: proxy.port)
        client.send(
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b0\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        )
        #expect(String(decoding: client.readAll(timeout: 30), as: UTF8.self).hasPrefix("HTTP/1.1 204 "))
        let sent = String(decoding: upstream.bytesReceived, as: UTF8.self)
        let names = sent.components(separatedBy: "Content-Disposition: form-data; name=\"").dropFirst().map {
            String($0.prefix { $0 != "\"" })
        }
        #expect(names == order, "\(names)")
        #expect(!sent.contains("forged-policy"), "the client's policy is dropped")
        #expect(sent.contains("\r\nContent-Length: "), "an exact Content-Length (buffer)")
        #expect(sent.contains("name=\"key\"\r\n\r\nu/cat.jpg\r\n"))
        #expect(proxy.accessLog(atLeast: 1).first?["object_key"] as? String == "u/cat.jpg")
    }
}
