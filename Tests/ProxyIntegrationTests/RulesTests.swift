import Foundation
import Testing

/// Upload rules through the real binary: what the demo upstream receives.
@Suite(.serialized) struct RulesTests {
    static func config(upstream: String, mode: String) -> String {
        """
        upstream: \(upstream)
        routes:
          - match: { path: /upload }
            request_body: \(mode)
            multipart:
              drop_fields: [token, key]
              rename_fields: { "userfile[]": file }
              filename: "{date}-{basename}{ext}"
              inject:
                - { name: token, before: file, qiniu: { access_key: "${QINIU_AK}", secret_key: "${QINIU_SK}", scope: "photos:{filename}", ttl: 1h } }
                - { name: key, before: file, value: "{filename}" }
                - { name: uploader, value: "{header:X-User-Id}" }
                - { name: done, position: last, value: "yes" }
              digest: { algorithms: [sha256, size] }

        """
    }

    @Test(arguments: ["stream", "buffer"])
    func rulesShapeWhatTheUpstreamReceives(mode: String) throws {
        let upstream = try startDemoUpstream()
        let path = NSTemporaryDirectory() + "formgate-rules-\(UUID().uuidString).yaml"
        try
            ("listen: 127.0.0.1:0\nworkers: 1\naccess_log: stdout\n"
            + Self.config(upstream: upstream.url, mode: mode))
            .write(toFile: path, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["QINIU_AK"] = "test-ak"
        environment["QINIU_SK"] = "test-sk"
        let proxy = try ServerProcess(
            formgateBinary, ["run", "-c", path], environment: environment, removingAtStop: [path])
        let content = Array((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let file = NSTemporaryDirectory() + "formgate-rules-\(UUID().uuidString).bin"
        try Data(content).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try run(
            try tool("curl"),
            [
                "-sS", "-H", "X-User-Id: 42", "-F", "token=client-secret", "-F", "title=Holiday",
                "-F", "userfile[]=@\(file);filename=../../Photo 1.PNG;type=image/png", proxy.url + "/upload",
            ])
        let receipt = try jsonObject(result.output)
        let parts = try #require(receipt["parts"] as? [String])
        #expect(parts == ["uploader", "title", "token", "key", "file", "file.sha256", "file.size", "done"])
        let fields = Dictionary(
            ((receipt["fields"] as? [[String: Any]]) ?? []).map {
                ($0["name"] as! String, $0["value"] as! String)
            },
            uniquingKeysWith: { first, _ in first })
        let files = try #require(receipt["files"] as? [[String: Any]])
        let filename = try #require(files.first?["filename"] as? String)
        #expect(filename.hasSuffix("-Photo 1.png"))
        #expect(filename.count == "YYYYMMDD-Photo 1.png".count)
        #expect(files.first?["sha256"] as? String == Digest.hex(content))
        #expect(fields["key"] == filename)
        #expect(fields["uploader"] == "42")
        #expect(fields["file.sha256"] == Digest.hex(content))
        #expect(fields["file.size"] == "70000")
        #expect(fields["done"] == "yes")
        let token = try #require(fields["token"])
        #expect(token.hasPrefix("test-ak:"))
        #expect(token != "client-secret")
        let policy = String(token.split(separator: ":")[2])
        let decoded = Data(
            base64Encoded: policy.replacingOccurrences(of: "-", with: "+").replacingOccurrences(
                of: "_", with: "/"))
        let policyObject = try jsonObject(try #require(decoded))
        #expect(policyObject["scope"] as? String == "photos:\(filename)")
        let body = String(decoding: result.output, as: UTF8.self)
        #expect(!body.contains("client-secret"))
        let log = try #require(proxy.accessLog(atLeast: 1).last)
        #expect(log["injected"] as? [String] == ["uploader", "token", "key", "done"])
        #expect(!proxy.stdout.contains("test-sk"))
        #expect(!proxy.stdout.contains(token))
    }

    @Test func unsafeFilenamesAreRefused() throws {
        let upstream = try startDemoUpstream()
        let proxy = try startProxy(
            "upstream: \(upstream.url)\nroutes:\n  - match: { path: /upload }\n    multipart: {}\n")
        let client = try RawClient(port: proxy.port)
        let body = "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"CON\"\r\n\r\nx\r\n--b--\r\n"
        client.send(
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        )
        let response = try #require(client.readResponse())
        #expect(response.status == 400)
        #expect(String(decoding: response.body, as: UTF8.self).contains("unsafe filename"))
    }

    static let sniffRoute = """
        routes:
          - match: { path: /upload }
            multipart:
              sniff: { bytes: 4096, content_type: override }
              allow_types: [image/*, application/pdf]

        """

    @Test func pngSentAsOctetStreamArrivesAsPNG() throws {
        let upstream = try startDemoUpstream()
        let proxy = try startProxy("upstream: \(upstream.url)\n" + Self.sniffRoute)
        let png: [UInt8] =
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 7, count: 20_000)
        let file = NSTemporaryDirectory() + "formgate-png-\(UUID().uuidString)"
        try Data(png).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let result = try run(
            try tool("curl"),
            [
                "-sS", "-F", "photo=@\(file);filename=x.bin;type=application/octet-stream",
                proxy.url + "/upload",
            ])
        let receipt = try jsonObject(result.output)
        let files = try #require(receipt["files"] as? [[String: Any]])
        #expect(files.first?["content_type"] as? String == "image/png")
        #expect(files.first?["sha256"] as? String == Digest.hex(png))
        let log = try #require(proxy.accessLog(atLeast: 1).last?["parts"] as? [[String: Any]])
        #expect(log.first?["declared_type"] as? String == "application/octet-stream")
        #expect(log.first?["sniffed_type"] as? String == "image/png")
    }

    @Test func executableNamedLikeAPhotoIsRefusedAndNeverCompletesUpstream() throws {
        let recorder = try FakeUpstream(.silent)
        let proxy = try startProxy("upstream: \(recorder.url)\n" + Self.sniffRoute)
        let elf: [UInt8] = [0x7F, 0x45, 0x4C, 0x46, 0x02, 0x01, 0x01] + Array(repeating: 0, count: 100_000)
        let body =
            Array(
                "--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nhi\r\n--b\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"photo.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
                    .utf8)
            + elf + Array("\r\n--b--\r\n".utf8)
        let client = try RawClient(port: proxy.port)
        client.send(
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: \(body.count)\r\n\r\n"
        )
        client.send(body)
        let response = try #require(client.readResponse())
        #expect(response.status == 415)
        #expect(String(decoding: response.body, as: UTF8.self).contains("photo"))
        // Settled once the request is logged and its upstream connection closed.
        #expect(eventually { proxy.accessLog.count == 1 && recorder.openConnections == 0 })
        for stream in recorder.streams {
            #expect(!ForwardedRequest(stream).isComplete, "the upstream received a complete request")
        }
        #expect(!String(decoding: recorder.bytesReceived, as: UTF8.self).contains("ELF"))
    }

    @Test func checkNamesTheLineAndColumnOfAMisspelledKey() throws {
        let path = NSTemporaryDirectory() + "formgate-check-\(UUID().uuidString).yaml"
        try
            "listen: 127.0.0.1:8080\nroutes:\n  - match: { path: /upload }\n    multipart:\n      drop_feilds: [token]\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let check = try ServerProcess(
            formgateBinary, ["check", "-c", path], waitForListening: false, removingAtStop: [path])
        check.process.waitUntilExit()
        #expect(check.process.terminationStatus == 1)
        let message = "\(path):5:7: routes[0].multipart.drop_feilds: unknown key"
        #expect(eventually { check.stderr.contains(message) }, "\(check.stderr)")
        let good = try ServerProcess(
            formgateBinary, ["check", "-c", packageRoot.appendingPathComponent("conf/formgate.yaml").path],
            waitForListening: false)
        good.process.waitUntilExit()
        #expect(good.process.terminationStatus == 0)
    }
}
