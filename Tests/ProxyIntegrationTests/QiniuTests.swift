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
        let answer = try jsonObject(result.output)
        guard fieldsFirst else {
            // As sent, a field follows the file: Qiniu's rule refuses it (the test can fail).
            #expect(answer["error"] as? String == "file must be the last part")
            return
        }
        #expect(answer["error"] == nil, "\(answer)")
        let key = try #require(answer["key"] as? String)
        #expect(key.hasSuffix(".jpg"))
        #expect(key.count == 36 + 4)
        #expect(answer["fsize"] as? Int == content.count)
        #expect(answer["sha256"] as? String == Digest.hex(content))
        #expect(answer["fields"] as? [String] == ["key", "token", "x:album"])
        #expect(!proxy.stdout.contains("test-sk"))
    }
}
