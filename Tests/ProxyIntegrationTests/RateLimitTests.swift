import Foundation
import Testing

/// `rate_limit:` per client: the identity when `auth:` established one, else the address. A
/// client over its limit gets 429 with `Retry-After` before its body is read, while another
/// client is served; both are counted in the metrics.
@Suite(.serialized) struct RateLimitTests {
    static let body =
        "--b0undary\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nlimited upload\r\n--b0undary--\r\n"

    static func keyFile() throws -> String {
        let path = NSTemporaryDirectory() + "formgate-keys-\(UUID().uuidString).txt"
        try
            "alice: \(Digest.hex(Array("key-alice-0123456789".utf8)))\nbob: \(Digest.hex(Array("key-bob-0123456789".utf8)))\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func send(_ port: Int, _ path: String, key: String?, length: Int? = nil) throws -> String {
        let client = try RawClient(port: port)
        let keyLine = key.map { "X-Api-Key: \($0)\r\n" } ?? ""
        client.send(
            "POST \(path) HTTP/1.1\r\nHost: test\r\n\(keyLine)Content-Type: multipart/form-data; boundary=b0undary\r\nContent-Length: \(length ?? Self.body.utf8.count)\r\nConnection: close\r\n\r\n"
                + (length == nil ? Self.body : ""))
        return String(decoding: client.readAll(timeout: 30), as: UTF8.self)
    }

    @Test func aClientOverItsRateIsRefusedWhileAnotherIsServed() throws {
        let keys = try Self.keyFile()
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let upstream = try FakeUpstream(.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        let proxy = try startProxy(
            """
            upstream: \(upstream.url)
            admin: 127.0.0.1:0
            routes:
              - name: limited
                match: { path: /upload }
                auth: { api_keys: { file: \(keys) } }
                rate_limit: { requests_per_second: 0.01, burst: 2, bytes_per_minute: 1MiB }
                multipart: {}
              - name: anonymous
                match: { path: /open }
                rate_limit: { requests_per_second: 0.01, burst: 1 }

            """, workers: 2)
        defer { proxy.stop() }
        for _ in 0..<2 {
            #expect(try send(proxy.port, "/upload", key: "key-alice-0123456789").hasPrefix("HTTP/1.1 200 "))
        }
        let before = upstream.connections
        let refused = try send(proxy.port, "/upload", key: "key-alice-0123456789")
        #expect(refused.hasPrefix("HTTP/1.1 429 "), "\(refused.prefix(200))")
        let retryAfter = refused.components(separatedBy: "\r\nRetry-After: ").dropFirst().first?.prefix {
            $0.isNumber
        }
        #expect(Int(retryAfter ?? "") ?? 0 >= 90, "a rate of 0.01/s refills one request in 100 s")
        #expect(upstream.connections == before, "nothing upstream for the refused request")
        #expect(
            try send(proxy.port, "/upload", key: "key-bob-0123456789").hasPrefix("HTTP/1.1 200 "),
            "bob is served")
        // bytes_per_minute: a declared body over what is left is refused before it is sent.
        let big = try send(proxy.port, "/upload", key: "key-bob-0123456789", length: 2 << 20)
        #expect(big.hasPrefix("HTTP/1.1 429 "), "\(big.prefix(200))")
        // Without auth the address is the client: one request, then 429.
        #expect(try send(proxy.port, "/open", key: nil).hasPrefix("HTTP/1.1 "))
        #expect(try send(proxy.port, "/open", key: nil).hasPrefix("HTTP/1.1 429 "))

        let adminPort = try #require(
            Int(
                proxy.stderr.components(separatedBy: "admin on 127.0.0.1:").last?.prefix { $0.isNumber } ?? ""
            ))
        let client = try RawClient(port: adminPort)
        client.send("GET /metrics HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n\r\n")
        let metrics = String(decoding: client.readAll(timeout: 30), as: UTF8.self)
        #expect(
            metrics.contains("formgate_rate_limited_total{route=\"limited\",limit=\"requests\"} 1\n"),
            "\(metrics)")
        #expect(metrics.contains("formgate_rate_limited_total{route=\"limited\",limit=\"bytes\"} 1\n"))
        #expect(metrics.contains("formgate_rate_limited_total{route=\"anonymous\",limit=\"requests\"} 1\n"))
        #expect(
            metrics.contains(
                "formgate_auth_total{route=\"limited\",result=\"allowed\",reason=\"api_key\"} 5\n"))
        #expect(!metrics.contains("key-alice"))
        let log = proxy.accessLog(atLeast: 7)
        #expect(log.filter { ($0["status"] as? Int) == 429 }.count == 3)
    }
}
