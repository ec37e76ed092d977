import Foundation
import Testing

/// The admin listener: health, readiness and metrics that add up to what was sent.
@Suite(.serialized) struct AdminTests {
    func get(_ port: Int, _ path: String) throws -> (status: Int, body: String) {
        let client = try RawClient(port: port)
        client.send("GET \(path) HTTP/1.1\r\nHost: admin\r\n\r\n")
        let response = try #require(client.readResponse())
        return (response.status, String(decoding: response.body, as: UTF8.self))
    }

    /// Parses Prometheus text into `name{labels}` → value.
    func samples(_ text: String) -> [String: Double] {
        var out: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...])
            else {
                Issue.record("not a sample line: \(line)")
                continue
            }
            out[String(line[..<space])] = value
        }
        return out
    }

    /// Sends a one-file upload (`withBody: false`: the head only) and returns the status.
    func upload(_ port: Int, path: String, content: [UInt8], type: String, withBody: Bool = true) throws
        -> Int
    {
        let body =
            Array(
                "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a\"\r\nContent-Type: \(type)\r\n\r\n"
                    .utf8)
            + content + Array("\r\n--b--\r\n".utf8)
        let client = try RawClient(port: port)
        client.send(
            "POST \(path) HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: \(body.count)\r\n\r\n"
        )
        if withBody { client.send(body) }
        return client.readResponse()?.status ?? 0
    }

    @Test func metricsAddUpToWhatWasSent() throws {
        let upstream = try startDemoUpstream()
        let down = try FakeUpstream(.silent)
        let downPort = down.port
        down.stop()
        let proxy = try startProxy(
            """
            admin: 127.0.0.1:0
            upstream: \(upstream.url)
            limits: { file_bytes: 1KiB }
            routes:
              - name: photos
                match: { path: /upload }
                multipart:
                  rename_fields: { f: file }
                  sniff: { bytes: 64, content_type: override }
                  allow_types: [image/*]
              - name: broken
                match: { path: /down }
                upstream: http://127.0.0.1:\(downPort)
                multipart: {}

            """)
        let adminPort = try #require(
            Int(
                proxy.stderr.components(separatedBy: "admin on 127.0.0.1:").last?.prefix { $0.isNumber } ?? ""
            ))
        #expect(try get(adminPort, "/healthz").status == 200)
        #expect(try get(adminPort, "/readyz").status == 200)
        let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + Array(repeating: 1, count: 100)
        let elf: [UInt8] = [0x7F, 0x45, 0x4C, 0x46] + Array(repeating: 0, count: 100)
        for _ in 0..<3 {
            #expect(
                try upload(proxy.port, path: "/upload", content: png, type: "application/octet-stream") == 200
            )
        }
        for _ in 0..<2 {
            #expect(try upload(proxy.port, path: "/upload", content: elf, type: "image/png") == 415)
        }
        #expect(
            try upload(
                proxy.port, path: "/upload", content: png + Array(repeating: 0, count: 2000),
                type: "image/png") == 413)
        // The head alone: the 502 follows the refused connect, before any body byte is read.
        #expect(
            try upload(proxy.port, path: "/down", content: png, type: "image/png", withBody: false) == 502)
        let metrics = samples(try get(adminPort, "/metrics").body)
        #expect(metrics["formgate_requests_total{route=\"photos\",status=\"200\"}"] == 3)
        #expect(metrics["formgate_requests_total{route=\"photos\",status=\"415\"}"] == 2)
        #expect(metrics["formgate_requests_total{route=\"photos\",status=\"413\"}"] == 1)
        #expect(metrics["formgate_requests_total{route=\"broken\",status=\"502\"}"] == 1)
        #expect(metrics["formgate_rule_actions_total{action=\"type_rejected\"}"] == 2)
        #expect(metrics["formgate_rule_actions_total{action=\"sniff_override\"}"] == 3)
        #expect(metrics["formgate_rule_actions_total{action=\"renamed\"}"] == 3)
        #expect(metrics["formgate_limit_rejections_total{limit=\"file_bytes\"}"] == 1)
        #expect(metrics["formgate_upstream_errors_total{kind=\"unreachable\"}"] == 1)
        #expect(metrics["formgate_request_duration_seconds_count"] == 7)
        #expect(metrics["formgate_uploads_in_flight"] == 0)
        // Every file part whose head was read, however the bytes were split: the 3 good files,
        // the 2 of a refused type and the one over its limit.
        #expect(metrics["formgate_files_total"] == 6)
        let log = proxy.accessLog(atLeast: 7)
        #expect(log.count == 7)
        let good = log.filter { $0["status"] as? Int == 200 }
        #expect(good.count == 3)
        let parts = (good.first?["parts"] as? [[String: Any]]) ?? []
        #expect(parts.first?["name"] as? String == "file")
        #expect(parts.first?["sniffed_type"] as? String == "image/png")

        // Readiness follows the upstream.
        upstream.stop()
        #expect(try get(adminPort, "/readyz").status == 503)
    }
}
