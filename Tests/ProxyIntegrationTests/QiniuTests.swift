import Foundation
import Testing

/// A client that sends no token uploads to a Qiniu-compatible mock through FormGate, which
/// mints the token, names the object and sends an exact Content-Length.
@Suite(.serialized) struct QiniuTests {
    @Test(arguments: [true, false])
    func formGateMintsTheTokenQiniuAccepts(fieldsFirst: Bool) throws {
        let mock = try ServerProcess(
            try python3(),
            [
                UpstreamServerTests.resources.appendingPathComponent("qiniu_mock.py").path, "test-ak",
                "test-sk", "photos",
            ])
        let config = """
            listen: 127.0.0.1:0
            workers: 1
            access_log: stdout
            upstream: \(mock.url)
            routes:
              - match: { path: /upload }
                request_body: buffer
                multipart:
                  order: \(fieldsFirst ? "fields_first" : "as_sent")
                  drop_fields: [token, key]
                  rename_fields: { upload: file }
                  filename: "{uuid}{ext}"
                  inject:
                    - { name: token, before: file, qiniu: { access_key: test-ak, secret_key: test-sk, scope: "photos:{filename}", ttl: 1h } }
                    - { name: key, before: file, value: "{filename}" }

            """
        let path = NSTemporaryDirectory() + "formgate-qiniu-\(UUID().uuidString).yaml"
        try config.write(toFile: path, atomically: true, encoding: .utf8)
        let proxy = try ServerProcess(formgateBinary, ["run", "-c", path], removingAtStop: [path])
        let content = Array((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let file = NSTemporaryDirectory() + "formgate-qiniu-\(UUID().uuidString).jpg"
        try Data(content).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        // The client sends its own (forged) token and key, and a field after the file.
        let result = try run(
            try tool("curl"),
            [
                "-sS", "-F", "token=forged:token:value", "-F", "key=../../etc/passwd", "-F",
                "upload=@\(file);filename=IMG_1.JPG", "-F", "x:album=summer", proxy.url + "/upload",
            ])
        guard fieldsFirst else {
            // As sent, a field follows the file, which Qiniu would refuse: FormGate refuses it
            // first, naming the field, and the mock never gets a whole request.
            let text = String(decoding: result.output, as: UTF8.self)
            #expect(text.hasPrefix("400 Bad Request: part x:album follows the file"), "\(text)")
            return
        }
        let answer = try jsonObject(result.output)
        #expect(answer["error"] == nil, "\(answer)")
        let key = try #require(answer["key"] as? String)
        #expect(key.hasSuffix(".jpg"))
        #expect(key.count == 36 + 4)
        #expect(answer["fsize"] as? Int == content.count)
        #expect(answer["sha256"] as? String == Digest.hex(content))
        #expect(answer["fields"] as? [String] == ["key", "token", "x:album"])
        #expect(!proxy.stdout.contains("test-sk"))
        let line = try #require(proxy.accessLog(atLeast: 1).first)
        #expect(line["providers"] as? [String] == ["qiniu"], "the access log names the provider")
        #expect(line["object_key"] as? String == key, "and the object key it granted")
    }

    /// Each authenticated client may write only under its own prefix: the token's scope is
    /// `photos:users/{auth:sub}/…`, so a key outside it is refused by the mock (as by Qiniu).
    @Test func theTokenScopeHoldsTheClientToItsPrefix() throws {
        let mock = try ServerProcess(
            try python3(),
            [
                UpstreamServerTests.resources.appendingPathComponent("qiniu_mock.py").path, "test-ak",
                "test-sk", "photos",
            ])
        defer { mock.stop() }
        let keys = NSTemporaryDirectory() + "formgate-qiniu-keys-\(UUID().uuidString).txt"
        try
            "alice: \(Digest.hex(Array("key-alice-0123456789".utf8)))\nbob: \(Digest.hex(Array("key-bob-0123456789".utf8)))\n"
            .write(toFile: keys, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let proxy = try startProxy(
            """
            upstream: \(mock.url)
            routes:
              - match: { path: /upload }
                request_body: buffer
                auth: { api_keys: { file: \(keys) } }
                multipart:
                  drop_fields: [token]
                  rename_fields: { upload: file }
                  inject:
                    - { name: token, before: file, qiniu: { access_key: test-ak, secret_key: test-sk, scope: "photos:users/{auth:sub}/{filename}", endUser: "{auth:sub}", ttl: 1h } }

            """, workers: 1)
        defer { proxy.stop() }
        let file = NSTemporaryDirectory() + "formgate-qiniu-\(UUID().uuidString).jpg"
        let content = Array((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try Data(content).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        func upload(apiKey: String, key: String) throws -> [String: Any] {
            let result = try run(
                try tool("curl"),
                [
                    "-sS", "-H", "X-Api-Key: \(apiKey)", "-F", "key=\(key)", "-F",
                    "upload=@\(file);filename=cat.jpg",
                    proxy.url + "/upload",
                ])
            return try jsonObject(result.output)
        }
        let own = try upload(apiKey: "key-alice-0123456789", key: "users/alice/cat.jpg")
        #expect(own["error"] == nil, "\(own)")
        #expect(own["key"] as? String == "users/alice/cat.jpg")
        #expect(own["sha256"] as? String == Digest.hex(content))
        let intruder = try upload(apiKey: "key-bob-0123456789", key: "users/alice/cat.jpg")
        #expect(intruder["error"] as? String == "scope mismatch", "\(intruder)")
        #expect(intruder["scope"] as? String == "photos:users/bob/cat.jpg")
        let log = proxy.accessLog(atLeast: 2)
        #expect(log.compactMap { $0["identity"] as? String } == ["alice", "bob"])
    }

    /// The official SDK re-signs the policy of the token FormGate minted to the same token.
    @Test func theQiniuSDKSignsFormGatesPolicyToTheSameToken() throws {
        let sdkPython = try sdkPython()
        let upstream = try FakeUpstream(.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let proxy = try startProxy(
            """
            upstream: \(upstream.url)
            routes:
              - match: { path: /upload }
                multipart:
                  inject:
                    - { name: token, before: file, qiniu: { access_key: oracle-ak, secret_key: oracle-sk, scope: "photos:{filename}", ttl: 1h, insertOnly: 1, returnBody: "{\\"key\\":\\"$(key)\\"}" } }

            """, workers: 1)
        defer { proxy.stop() }
        let body =
            "--b0\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cat.jpg\"\r\n\r\nmeow\r\n--b0--\r\n"
        let client = try RawClient(port: proxy.port)
        client.send(
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b0\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        )
        #expect(String(decoding: client.readAll(timeout: 30), as: UTF8.self).hasPrefix("HTTP/1.1 200 "))
        let sent = String(decoding: upstream.bytesReceived, as: UTF8.self)
        let token = try #require(
            sent.components(separatedBy: "name=\"token\"\r\n\r\n").dropFirst().first?.components(
                separatedBy: "\r\n"
            ).first)
        let (status, output) = try run(
            sdkPython,
            [
                UpstreamServerTests.resources.appendingPathComponent("qiniu_oracle.py").path, "oracle-ak",
                "oracle-sk", token,
            ])
        #expect(status == 0)
        let oracle = try jsonObject(output)
        #expect(oracle["sdk_token"] as? String == token, "the SDK's token for FormGate's policy")
        let policy = try #require(oracle["policy"] as? String)
        #expect(policy.hasPrefix("{\"scope\":\"photos:cat.jpg\",\"deadline\":"))
        #expect(
            policy.hasSuffix(",\"insertOnly\":1,\"returnBody\":\"{\\\"key\\\":\\\"$(key)\\\"}\"}"),
            "\(policy)")
    }
}

/// The Python of the Makefile's SDK venv (`make sdk-venv`: the vendors' SDKs from PyPI).
func sdkPython() throws -> String {
    guard let path = ProcessInfo.processInfo.environment["FORMGATE_SDK_PYTHON"],
        FileManager.default.isExecutableFile(atPath: path)
    else {
        throw TestFailure("FORMGATE_SDK_PYTHON is not set or not executable (make sdk-venv makes it)")
    }
    return path
}
