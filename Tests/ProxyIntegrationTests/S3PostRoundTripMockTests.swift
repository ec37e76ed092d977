import Foundation
import Testing

/// FormGate's `s3_post` fields against `s3_post_mock.py`, which verifies what S3 verifies and
/// moto does not (signature, expiry, every condition type, extra fields, Content-Length): the
/// fields FormGate mints are accepted, and the mock refuses a wrong signature, an expired
/// policy, a key outside the granted prefix, sizes outside the range and a chunked body.
@Suite(.serialized) struct S3PostRoundTripMockTests {
    /// A route granting `users/{header:X-User}/…` with every condition type in its policy: exact
    /// (`acl`), starts-with (`key_prefix`, `x-amz-meta-tag`), content-length-range (from
    /// `limits.file_bytes`, narrowed by `range`), the sniffed Content-Type.
    func startRoute(
        mock: ServerProcess, secret: String = "mock-secret", ttl: String = "1h", fileBytes: String = "1MiB",
        range: String? = nil
    ) throws -> ServerProcess {
        let rangeCondition = range.map { ", content-length-range: \($0)" } ?? ""
        return try startProxy(
            """
            upstream: \(mock.url)
            limits: { file_bytes: \(fileBytes) }
            routes:
              - match: { path: /photos }
                request_body: buffer
                multipart:
                  sniff: { bytes: 4096, content_type: override }
                  inject:
                    - before: file
                      s3_post:
                        access_key: AKIDMOCK
                        secret_key: \(secret)
                        region: eu-central-1
                        bucket: photos
                        key: "users/{header:X-User}/{uuid}{ext}"
                        key_prefix: "users/{header:X-User}/"
                        ttl: \(ttl)
                        conditions: { acl: private, x-amz-meta-tag: { starts_with: "trip-" }\(rangeCondition) }

            """, workers: 1)
    }

    /// alice's form (`fields`, then `file` declared as text/plain) posted with curl to `url`
    /// (FormGate's route or the mock itself): the answer's status and body.
    func post(_ url: String, fields: [(String, String)], file: String) throws -> (status: Int, body: String) {
        var arguments = ["-sS", "-w", "\n%{http_code}", "-H", "X-User: alice"]
        for (name, value) in fields { arguments += ["--form-string", "\(name)=\(value)"] }
        arguments += ["-F", "file=@\(file);filename=trip.jpg;type=text/plain", url]
        let text = String(decoding: try run(try tool("curl"), arguments).output, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return (Int(lines.last ?? "") ?? -1, lines.dropLast().joined(separator: "\n"))
    }

    let clientFields = [("acl", "private"), ("x-amz-meta-tag", "trip-2026")]

    /// Through FormGate to the mock: the upload passes every condition, the client's forged
    /// `policy` and `x-amz-signature` are dropped, and the object holds the bytes and the type.
    @Test func formGatesFieldsPassEveryCondition() throws {
        let mock = try startS3PostMock()
        defer { mock.stop() }
        let proxy = try startRoute(mock: mock)
        defer { proxy.stop() }
        let file = try writePNGFile(size: 200_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        // The client forges a policy and a signature of its own: both are dropped.
        let forged =
            clientFields + [("policy", "Zm9yZ2Vk"), ("x-amz-signature", String(repeating: "0", count: 64))]
        let answer = try post(proxy.url + "/photos", fields: forged, file: file.path)
        #expect(answer.status == 204, "\(answer.body)")
        let post = try #require(try mockPosts(mock).last)
        #expect(post["status"] as? Int == 204, "\(post)")
        let fields = try #require(post["fields"] as? [[String]])
        let order = [
            "acl", "x-amz-meta-tag", "Content-Type", "key", "x-amz-algorithm",
            "x-amz-credential", "x-amz-date", "policy", "x-amz-signature",
        ]
        #expect(fields.map { $0[0] } == order, "the client's fields, then FormGate's, once each")
        let values = Dictionary(fields.map { ($0[0], $0[1]) }, uniquingKeysWith: { first, _ in first })
        #expect(values["policy"] != "Zm9yZ2Vk" && values["x-amz-signature"] != forged[3].1)
        let key = try #require(post["key"] as? String)
        #expect(key.hasPrefix("users/alice/") && key.hasSuffix(".png"), "\(key)")
        #expect(proxy.accessLog(atLeast: 1).first?["object_key"] as? String == key)
        let policy = try decodedPolicy(try #require(values["policy"]))
        let conditions = try #require(policy["conditions"] as? [Any])
        let written = try conditions.map {
            String(
                decoding: try JSONSerialization.data(withJSONObject: $0, options: .withoutEscapingSlashes),
                as: UTF8.self)
        }
        for expected in [
            #"{"bucket":"photos"}"#, #"["starts-with","$key","users/alice/"]"#,
            #"{"Content-Type":"image/png"}"#, #"["content-length-range",0,1048576]"#,
            #"{"acl":"private"}"#, #"["starts-with","$x-amz-meta-tag","trip-"]"#,
        ] {
            #expect(written.contains(expected), "\(expected) in \(written)")
        }
        let (_, body) = try run(
            try tool("curl"), ["-sS", "-D", "-", "-o", "/dev/null", mock.url + "/photos/" + key])
        #expect(String(decoding: body, as: UTF8.self).contains("Content-Type: image/png"))
        let (_, bytes) = try run(try tool("curl"), ["-sS", mock.url + "/photos/" + key])
        #expect(Digest.hex(Array(bytes)) == file.sha256, "the object holds the very bytes sent")
        #expect((post["file"] as? [String: Any])?["size"] as? Int == 200_000)
    }

    /// S3 and its kin match form field names without regard to case (`Policy` is `policy`), so
    /// a client's `KEY`, `Policy` or `X-Amz-Signature` would stand beside FormGate's: dropped too.
    @Test func theClientsFieldsOfFormGatesNamesInAnyCaseAreDropped() throws {
        let mock = try startS3PostMock()
        defer { mock.stop() }
        let proxy = try startRoute(mock: mock)
        defer { proxy.stop() }
        let file = try writePNGFile(size: 5_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let forged = [("KEY", "users/alice/chosen.png"), ("Policy", "Zm9yZ2Vk"), ("X-Amz-Signature", "00")]
        let answer = try post(proxy.url + "/photos", fields: clientFields + forged, file: file.path)
        #expect(answer.status == 204, "\(answer.body)")
        let post = try #require(try mockPosts(mock).first)
        let names = (post["fields"] as? [[String]] ?? []).map { $0[0] }
        #expect(!names.contains { ["KEY", "Policy", "X-Amz-Signature"].contains($0) }, "\(names)")
        #expect((post["key"] as? String)?.hasSuffix(".png") == true && post["key"] as? String != forged[0].1)
        let parts = try #require(proxy.accessLog(atLeast: 1).first?["parts"] as? [[String: Any]])
        #expect(parts.filter { $0["dropped"] as? Bool == true }.count == 3, "\(parts)")
    }

    /// Temporary credentials (`x-amz-security-token`, covered by the policy) and an exact key
    /// that JSON must escape (`"`, UTF-8): the mock compares the decoded policy with the raw
    /// field. A token the store does not know is refused (403 InvalidToken).
    @Test(arguments: ["tok/en+=", "another-token"])
    func temporaryCredentialsAndAnEscapedKey(mockToken: String) throws {
        let mock = try startS3PostMock(sessionToken: mockToken)
        defer { mock.stop() }
        let proxy = try startProxy(
            """
            upstream: \(mock.url)
            routes:
              - match: { path: /photos }
                request_body: buffer
                multipart:
                  inject:
                    - { before: file, s3_post: { access_key: AKIDMOCK, secret_key: mock-secret, session_token: "tok/en+=", region: eu-central-1, bucket: photos, key: "u/{filename}" } }

            """, workers: 1)
        defer { proxy.stop() }
        let body =
            "--b0\r\nContent-Disposition: form-data; name=\"file\"; filename=\"été \\\"1\\\".png\"\r\nContent-Type: image/png\r\n\r\nhello\r\n--b0--\r\n"
        let client = try RawClient(port: proxy.port)
        client.send(
            "POST /photos HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b0\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        )
        let answer = String(decoding: client.readAll(timeout: 30), as: UTF8.self)
        let post = try #require(try mockPosts(mock).first)
        let values = Dictionary(
            (post["fields"] as? [[String]] ?? []).map { ($0[0], $0[1]) },
            uniquingKeysWith: { first, _ in first })
        #expect(values["x-amz-security-token"] == "tok/en+=")
        #expect(values["key"] == "u/été \"1\".png")
        let policy = try decodedPolicy(try #require(values["policy"]))
        let conditions = policy["conditions"] as? [Any] ?? []
        #expect(conditions.contains { ($0 as? [String: String])?["key"] == "u/été \"1\".png" })
        if mockToken == "tok/en+=" {
            #expect(answer.hasPrefix("HTTP/1.1 204 "), "\(answer)")
            #expect(post["key"] as? String == "u/été \"1\".png")
        } else {
            #expect(
                answer.hasPrefix("HTTP/1.1 403 ") && answer.contains("<Code>InvalidToken</Code>"), "\(answer)"
            )
            #expect(post["key"] is NSNull)
        }
    }

    /// FormGate signs with a stale secret: the store's 403 is relayed, and nothing is stored.
    @Test func aSignatureFromTheWrongSecretIsRefusedAndNothingStored() throws {
        let mock = try startS3PostMock(secretKey: "the-real-secret")
        defer { mock.stop() }
        let proxy = try startRoute(mock: mock, secret: "a-stale-secret")
        defer { proxy.stop() }
        let file = try writePNGFile(size: 5_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let answer = try post(proxy.url + "/photos", fields: clientFields, file: file.path)
        #expect(answer.status == 403, "\(answer.body)")
        #expect(answer.body.contains("<Code>SignatureDoesNotMatch</Code>"), "S3's error, relayed")
        let posts = try mockPosts(mock)
        #expect(posts.count == 1 && posts[0]["key"] is NSNull, "\(posts)")
        #expect(!proxy.stdout.contains("a-stale-secret"), "the secret never reaches the log")
    }

    /// The mock's clock runs two hours ahead of FormGate's 1 h policy.
    @Test func anExpiredPolicyIsRefused() throws {
        let mock = try startS3PostMock(clockOffset: 7200)
        defer { mock.stop() }
        let proxy = try startRoute(mock: mock, ttl: "1h")
        defer { proxy.stop() }
        let file = try writePNGFile(size: 5_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let answer = try post(proxy.url + "/photos", fields: clientFields, file: file.path)
        #expect(answer.status == 403, "\(answer.body)")
        #expect(answer.body.contains("<Code>AccessDenied</Code>") && answer.body.contains("Policy expired"))
        #expect(try mockPosts(mock).first?["key"] is NSNull)
    }

    /// The fields FormGate minted for alice, replayed straight to the mock: under her prefix
    /// they still pass (the policy is `starts-with`, not the exact key); outside it they fail.
    @Test func aReplayedFormWithAKeyOutsideThePrefixIsRefused() throws {
        let mock = try startS3PostMock()
        defer { mock.stop() }
        let proxy = try startRoute(mock: mock)
        defer { proxy.stop() }
        let file = try writePNGFile(size: 5_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        #expect(try post(proxy.url + "/photos", fields: clientFields, file: file.path).status == 204)
        let minted = try #require(try mockPosts(mock).first?["fields"] as? [[String]]).map { ($0[0], $0[1]) }
        func replay(key: String) throws -> (status: Int, body: String) {
            try post(
                mock.url + "/photos", fields: minted.map { $0.0 == "key" ? ("key", key) : $0 },
                file: file.path)
        }
        #expect(try replay(key: "users/alice/renamed.png").status == 204)
        let outside = try replay(key: "users/bob/stolen.png")
        #expect(outside.status == 403, "\(outside.body)")
        #expect(outside.body.contains("Policy Condition failed") && outside.body.contains("users/alice/"))
        let keys = try mockPosts(mock).map { $0["key"] as? String }
        #expect(keys.count == 3 && keys[1] == "users/alice/renamed.png" && keys[2] == nil, "\(keys)")
    }

    /// A policy range narrower than `limits.file_bytes` is the store's to enforce (400
    /// EntityTooLarge / EntityTooSmall); a file over `limits.file_bytes` is refused by FormGate
    /// itself (413) before anything goes upstream (`buffer` spools the whole body first).
    @Test func sizesOutsideTheRangeAreRefused() throws {
        let mock = try startS3PostMock()
        defer { mock.stop() }
        let narrowed = try startRoute(mock: mock, fileBytes: "1MiB", range: "[1KiB, 64KiB]")
        defer { narrowed.stop() }
        let large = try writePNGFile(size: 100_000)
        defer { try? FileManager.default.removeItem(atPath: large.path) }
        let small = try writePNGFile(size: 500)
        defer { try? FileManager.default.removeItem(atPath: small.path) }
        let tooLarge = try post(narrowed.url + "/photos", fields: clientFields, file: large.path)
        #expect(
            tooLarge.status == 400 && tooLarge.body.contains("<Code>EntityTooLarge</Code>"), "\(tooLarge)")
        let tooSmall = try post(narrowed.url + "/photos", fields: clientFields, file: small.path)
        #expect(
            tooSmall.status == 400 && tooSmall.body.contains("<Code>EntityTooSmall</Code>"), "\(tooSmall)")
        #expect(try mockPosts(mock).map { $0["code"] as? String } == ["EntityTooLarge", "EntityTooSmall"])
        let limited = try startRoute(mock: mock, fileBytes: "64KiB")
        defer { limited.stop() }
        let overLimit = try post(limited.url + "/photos", fields: clientFields, file: large.path)
        #expect(overLimit.status == 413, "\(overLimit)")
        #expect(try mockPosts(mock).count == 2, "the mock never saw the over-limit upload")
    }

    /// S3 (and the mock) need a Content-Length on a POST: a chunked one is 411.
    @Test func aChunkedBodyIsRefused() throws {
        let mock = try startS3PostMock()
        defer { mock.stop() }
        let file = try writePNGFile(size: 5_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let (_, output) = try run(
            try tool("curl"),
            [
                "-sS", "-w", "\n%{http_code}", "-H", "Transfer-Encoding: chunked", "-F", "key=a.png", "-F",
                "file=@\(file.path)", mock.url + "/photos",
            ])
        let text = String(decoding: output, as: UTF8.self)
        #expect(text.hasSuffix("\n411") && text.contains("<Code>MissingContentLength</Code>"), "\(text)")
        #expect(try mockPosts(mock).first?["chunked"] as? Bool == true)
    }

    /// botocore's own `generate_presigned_post` form (an `eq` condition, a starts-with, a range)
    /// passes the mock (with an `x-ignore-` field, which needs no condition), and the mock
    /// refuses it once a field breaks the policy, is not covered, or follows the file: the
    /// mock's checks are S3's, not FormGate's.
    @Test func botocoresFormPassesTheMockAndATamperedOneDoesNot() throws {
        let mock = try startS3PostMock()
        defer { mock.stop() }
        let fields = try s3Client(
            mock.url, ["presign", "photos", "sdk/trip.png", "AKIDMOCK", "mock-secret", "eu-central-1"])
        let pairs = fields.compactMap { name, value in (value as? String).map { (name, $0) } }
        let form = pairs.sorted { $0.0 < $1.0 }
        let file = try writePNGFile(size: 5_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let accepted = try post(
            mock.url + "/photos",
            fields: form + [("x-amz-meta-tag", "trip-1"), ("x-ignore-note", "needs no condition")],
            file: file.path)
        #expect(accepted.status == 204, "\(accepted.body)")
        let publicRead = form.map { $0.0 == "acl" ? ("acl", "public-read") : $0 }
        let tampered = try post(
            mock.url + "/photos", fields: publicRead + [("x-amz-meta-tag", "trip-1")], file: file.path)
        #expect(tampered.status == 403, "\(tampered.body)")
        #expect(
            tampered.body.contains(#"Policy Condition failed: ["eq", "$acl", "private"]"#), "\(tampered.body)"
        )
        let extra = try post(
            mock.url + "/photos", fields: form + [("x-amz-meta-tag", "trip-1"), ("x-other", "1")],
            file: file.path)
        #expect(extra.status == 403 && extra.body.contains("Extra input fields: x-other"), "\(extra.body)")
        // S3 ignores a field after the file; the mock refuses it so that misuse shows.
        var afterFile = ["-sS", "-w", "\n%{http_code}"]
        for (name, value) in form + [("x-amz-meta-tag", "trip-1")] {
            afterFile += ["--form-string", "\(name)=\(value)"]
        }
        afterFile += ["-F", "file=@\(file.path)", "--form-string", "x-ignore-late=1", mock.url + "/photos"]
        let late = String(decoding: try run(try tool("curl"), afterFile).output, as: UTF8.self)
        #expect(late.hasSuffix("\n400") && late.contains("Field x-ignore-late follows the file"), "\(late)")
        #expect(try mockPosts(mock).map { $0["status"] as? Int } == [204, 403, 403, 400])
    }
}
