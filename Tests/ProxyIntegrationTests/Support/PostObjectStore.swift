import Foundation
import Testing

/// The POST-form credentials FormGate mints for Aliyun OSS (V1, V4) and Tencent COS, each
/// against its verifying mock, and the round trips and refusals every one of them must show.
/// A client sends no credentials (but a forged `policy`, signature and type field, which
/// FormGate drops); what counts is what the mock stored, read back with `GET /KEY`.
enum PostObjectStore: String, CustomStringConvertible, Sendable {
    case ossV1, ossV4, cos

    static let accessKey = "LTAI-test-access-key"
    static let secretKey = "test-secret-key-0123456789"
    /// The object key template: the route's `filename` is `{uuid}{ext}`.
    static let keyTemplate = "uploads/{date}/{filename}"

    var description: String { rawValue }
    var kind: String { self == .cos ? "cos_post" : "oss_post" }
    var script: String { self == .cos ? "cos_post_mock.py" : "oss_post_mock.py" }
    var bucket: String { self == .cos ? "photos-1250000000" : "photos" }

    /// What a client tries to slip past FormGate: its own policy and signature, and the fields
    /// the store would take the object's Content-Type from over the part's (OSS:
    /// `x-oss-content-type`, `Content-Type`; COS: `Content-Type`), set to serve an image as HTML.
    var forgedFields: [(String, String)] {
        let signature =
            switch self {
            case .ossV1: "Signature"
            case .ossV4: "x-oss-signature"
            case .cos: "q-signature"
            }
        let types = self == .cos ? ["Content-Type"] : ["x-oss-content-type", "Content-Type"]
        return [("policy", "eyJleHBpcmF0aW9uIjoiMjA5OS0wMS0wMVQwMDowMDowMFoifQ=="), (signature, "forged")]
            + types.map { ($0, "text/html") }
    }

    /// The injection's provider mapping; `settings` are more of its keys (`security_token: …`).
    func provider(secretKey: String, ttl: String, settings: String) -> String {
        switch self {
        case .ossV1, .ossV4:
            "oss_post: { access_key: \(Self.accessKey), secret_key: \(secretKey), region: cn-hangzhou, bucket: \(bucket), key: \"\(Self.keyTemplate)\", ttl: \(ttl), version: \(self == .ossV1 ? "v1" : "v4")\(settings) }"
        case .cos:
            "cos_post: { secret_id: \(Self.accessKey), secret_key: \(secretKey), bucket: \(bucket), key: \"\(Self.keyTemplate)\", ttl: \(ttl)\(settings) }"
        }
    }

    func startMock(clockOffset: Int = 0, securityToken: String? = nil) throws -> PostObjectMock {
        try PostObjectMock(
            script: script, accessKey: Self.accessKey, secretKey: Self.secretKey, bucket: bucket,
            region: self == .cos ? nil : "cn-hangzhou", clockOffset: clockOffset, securityToken: securityToken
        )
    }

    /// FormGate in front of `upstream`: sniffing overrides the declared type, the file is
    /// renamed `{uuid}{ext}` and the provider's fields go before it.
    func startProxy(
        upstream: String, requestBody: String = "buffer", secretKey: String = Self.secretKey,
        ttl: String = "1h", maxFileBytes: String = "4GiB", settings: String = ""
    ) throws -> ServerProcess {
        try ProxyIntegrationTests.startProxy(
            """
            upstream: \(upstream)
            limits: { file_bytes: \(maxFileBytes) }
            routes:
              - match: { path: /upload }
                request_body: \(requestBody)
                multipart:
                  sniff: { bytes: 4096, content_type: override }
                  filename: "{uuid}{ext}"
                  inject: [{ before: file, \(provider(secretKey: secretKey, ttl: ttl, settings: settings)) }]

            """, workers: 1)
    }

    /// A client uploads `bytes` through FormGate; the mock verified and stored them under the
    /// templated key, byte-exact, with the sniffed type; the forged fields were dropped.
    func roundTrip(bytes: Int, requestBody: String) throws {
        let mock = try startMock()
        defer { mock.stop() }
        let proxy = try startProxy(upstream: mock.url, requestBody: requestBody)
        defer { proxy.stop() }
        let file = try pngFile(bytes: bytes)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let answer = try postForm(
            proxy.url + "/upload", fields: forgedFields, file: file.path, filename: "holiday.bin")
        try #require(answer.status == 204, "\(self) \(requestBody): \(answer.body)")
        let line = try #require(proxy.accessLog(atLeast: 1).first)
        let key = try #require(line["object_key"] as? String, "\(line)")
        #expect(key.wholeMatch(of: /uploads\/[0-9]{8}\/[0-9a-f-]{36}\.png/) != nil, "\(key)")
        #expect(line["providers"] as? [String] == [kind])
        let parts = line["parts"] as? [[String: Any]] ?? []
        let dropped = parts.filter { $0["dropped"] as? Bool == true }.compactMap { $0["name"] as? String }
        #expect(dropped == forgedFields.map(\.0), "the client's policy, signature and type are dropped")
        #expect(try mock.keys() == [key])
        let stored = try mock.object(key)
        #expect(stored.status == 200)
        #expect(stored.size == bytes)
        #expect(stored.sha256 == file.sha256, "byte-exact")
        #expect(stored.contentType == "image/png", "the sniffed type, not the declared or forged one")
        #expect(!proxy.stdout.contains(Self.secretKey) && !proxy.stderr.contains(Self.secretKey))
    }

    /// Temporary credentials: FormGate sends the STS token (and, for OSS, the
    /// `success_action_status` it is told), a store expecting that token stores the object,
    /// and one expecting another refuses it (403 InvalidSecurityToken).
    func carriesTheSecurityToken() throws {
        let status = self == .cos ? "" : ", success_action_status: \"201\""
        for (token, expected) in [("sts-token-1", self == .cos ? 204 : 201), ("sts-token-2", 403)] {
            let mock = try startMock(securityToken: token)
            defer { mock.stop() }
            let proxy = try startProxy(upstream: mock.url, settings: ", security_token: sts-token-1\(status)")
            defer { proxy.stop() }
            let file = try pngFile(bytes: 30_000)
            defer { try? FileManager.default.removeItem(atPath: file.path) }
            let answer = try postForm(proxy.url + "/upload", fields: [], file: file.path, filename: "a.png")
            #expect(answer.status == expected, "\(self) with the store's token \(token): \(answer.body)")
            let key = try #require(proxy.accessLog(atLeast: 1).first?["object_key"] as? String)
            if expected == 403 {
                #expect(answer.errorCode == "InvalidSecurityToken")
                #expect(try mock.keys() == [])
                continue
            }
            #expect(try mock.object(key).sha256 == file.sha256)
            if expected == 201 { #expect(answer.body.contains("<Key>\(key)</Key>"), "\(answer.body)") }
        }
    }

    /// FormGate signs with a secret the store does not know: 403 SignatureDoesNotMatch.
    func refusesAWrongSecret() throws {
        let mock = try startMock()
        defer { mock.stop() }
        let proxy = try startProxy(upstream: mock.url, secretKey: "not-the-secret")
        defer { proxy.stop() }
        try expectRefusal(through: proxy, mock: mock, status: 403, code: "SignatureDoesNotMatch")
    }

    /// The store's clock is an hour past FormGate's 60 s ttl: 403 AccessDenied.
    func refusesAnExpiredPolicy() throws {
        let mock = try startMock(clockOffset: 3600)
        defer { mock.stop() }
        let proxy = try startProxy(upstream: mock.url, ttl: "60s")
        defer { proxy.stop() }
        try expectRefusal(through: proxy, mock: mock, status: 403, code: "AccessDenied")
    }

    /// FormGate's fields replayed straight to the store are accepted as they are, and refused
    /// (403 AccessDenied, nothing stored) once the key is changed: the policy pins the key.
    func refusesAKeyOutsideThePolicy() throws {
        let fields = try fieldsFormGateMints(maxFileBytes: "4GiB")
        let key = try #require(fields.first { $0.0 == "key" }?.1)
        let mock = try startMock()
        defer { mock.stop() }
        let file = try pngFile(bytes: 20_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let replayed = try postForm(
            mock.url + "/", fields: fields, file: file.path, filename: "a.png", type: "image/png")
        #expect(replayed.status == 204, "the fields as minted: \(replayed.body)")
        let changed = fields.map { $0.0 == "key" ? ("key", "uploads/someone-else/avatar.png") : $0 }
        let refused = try postForm(
            mock.url + "/", fields: changed, file: file.path, filename: "a.png", type: "image/png")
        #expect(refused.status == 403 && refused.errorCode == "AccessDenied", "\(self): \(refused.body)")
        #expect(try mock.keys() == [key], "only the key the policy names was stored")
    }

    /// A file larger than the policy's `content-length-range` (FormGate's `limits.file_bytes`):
    /// replayed to the store, 400 EntityTooLarge; through FormGate, its own 413 comes first and
    /// the store receives nothing.
    func refusesAFileOverTheLengthRange() throws {
        let fields = try fieldsFormGateMints(maxFileBytes: "64KiB")
        let mock = try startMock()
        defer { mock.stop() }
        let file = try pngFile(bytes: 100_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let replayed = try postForm(
            mock.url + "/", fields: fields, file: file.path, filename: "a.png", type: "image/png")
        #expect(replayed.status == 400 && replayed.errorCode == "EntityTooLarge", "\(self): \(replayed.body)")
        let proxy = try startProxy(upstream: mock.url, maxFileBytes: "64KiB")
        defer { proxy.stop() }
        let answer = try postForm(proxy.url + "/upload", fields: [], file: file.path, filename: "a.png")
        #expect(answer.status == 413, "\(answer.body)")
        #expect(try mock.keys() == [], "nothing stored")
    }

    /// The mock, like the store, answers a chunked body with 411 MissingContentLength (after
    /// reading it, so curl sees the answer) and a field after the file with 400 InvalidArgument,
    /// before it looks at any signature.
    func refusesChunkedBodiesAndFieldsAfterTheFile() throws {
        let mock = try startMock()
        defer { mock.stop() }
        let file = try pngFile(bytes: 300_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let chunked = try postForm(
            mock.url + "/", fields: [("key", "a.png")], file: file.path, filename: "a.png",
            curlArguments: ["-H", "Transfer-Encoding: chunked"])
        #expect(chunked.status == 411 && chunked.errorCode == "MissingContentLength", "\(chunked.body)")
        let late = try postForm(
            mock.url + "/", fields: [("key", "a.png")], file: file.path, filename: "a.png",
            curlArguments: ["--form-string", "x-oss-meta-album=summer"])
        #expect(late.status == 400 && late.errorCode == "InvalidArgument", "\(late.body)")
        #expect(late.body.contains("the file must be the last form field"))
        #expect(try mock.keys() == [])
    }

    /// One upload through `proxy` is refused by the store with `status` and `code`, relayed to
    /// the client, and nothing is stored.
    private func expectRefusal(through proxy: ServerProcess, mock: PostObjectMock, status: Int, code: String)
        throws
    {
        let file = try pngFile(bytes: 50_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let answer = try postForm(proxy.url + "/upload", fields: [], file: file.path, filename: "a.png")
        #expect(answer.status == status && answer.errorCode == code, "\(self): \(answer.body)")
        #expect(proxy.accessLog(atLeast: 1).first?["upstream_status"] as? Int == status)
        #expect(try mock.keys() == [], "nothing stored")
    }

    /// The fields FormGate sends before the file, captured by a recording upstream.
    private func fieldsFormGateMints(maxFileBytes: String) throws -> [(String, String)] {
        let upstream = try FakeUpstream(.respond("HTTP/1.1 204 No Content\r\n\r\n"))
        defer { upstream.stop() }
        let proxy = try startProxy(upstream: upstream.url, maxFileBytes: maxFileBytes)
        defer { proxy.stop() }
        let file = try pngFile(bytes: 1000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let answer = try postForm(proxy.url + "/upload", fields: [], file: file.path, filename: "a.png")
        #expect(answer.status == 204)
        #expect(
            eventually { String(decoding: upstream.bytesReceived, as: UTF8.self).contains("; filename=") })
        let fields = formFieldsBeforeTheFile(upstream.bytesReceived)
        #expect(fields.first?.0 == "key" && fields.contains { $0.0 == "policy" }, "\(fields.map(\.0))")
        return fields
    }
}
