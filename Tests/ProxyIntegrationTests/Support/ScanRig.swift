import Foundation
import Testing

/// A proxy whose routes scan with a scanner at `scanner` (clamd's address, or a fake's), in
/// front of `upstream`: `/stream` and `/buffer` (`request_body: buffer`) reject failures,
/// `/allow` passes them (`on_error: allow`, `oversize: allow`). The scanner `timeout` defaults
/// to a hang guard: clamd on a busy machine (the suites run in parallel) takes seconds to scan
/// 64 MiB, and a 5 s timeout turned ScanTests' 422s into 503s.
struct ScanRig {
    let proxy: ServerProcess
    let files: String

    init(
        scanner: String, upstream: String, timeout: String = "60s", maxBytes: String = "300MiB",
        workers: Int = 2, connections: Int = 4
    ) throws {
        files = NSTemporaryDirectory() + "formgate-scan-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: files, withIntermediateDirectories: true)
        proxy = try startListeners(
            ["{ address: 127.0.0.1:0, http2: { h2c: true } }"],
            """
            admin: 127.0.0.1:0
            upstream: \(upstream)
            timeouts: { upstream_response: 120s }
            scanners:
              clamd: { address: \(scanner), timeout: \(timeout), max_bytes: \(maxBytes), connections: \(connections) }
            routes:
              - match: { path: /stream }
                multipart: { scan: { clamd: default } }
              - match: { path: /buffer }
                request_body: buffer
                multipart: { scan: { clamd: default } }
              - match: { path: /allow }
                multipart: { scan: { clamd: default, on_error: allow, oversize: allow } }
              - match: { path: /plain }

            """, workers: workers)
    }

    /// A file of `count` bytes (a seeded block repeated) with `insert` at `offset`; its path.
    func file(_ name: String, count: Int, insert: [UInt8] = [], at offset: Int = 0, seed: UInt64 = 0x5CA4)
        throws -> String
    {
        let block = SeededRandom.bytes(1 << 20, seed: seed)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count)
        while bytes.count < count { bytes += block.prefix(count - bytes.count) }
        if !insert.isEmpty { bytes.replaceSubrange(offset..<offset + insert.count, with: insert) }
        let path = files + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Uploads `parts` (field name, file path) to `path` with curl; the status and body.
    func upload(_ path: String, _ parts: [(String, String)], http2: Bool = false) throws -> (
        status: Int, body: String
    ) {
        var arguments = ["-sS", "-o", "-", "-w", "\n%{http_code}"]
        if http2 { arguments.append("--http2-prior-knowledge") }
        for (name, file) in parts { arguments += ["-F", "\(name)=@\(file)"] }
        let result = try run(try tool("curl"), arguments + [proxy.url + path])
        let text = String(decoding: result.output, as: UTF8.self)
        let status = Int(text.split(separator: "\n").last ?? "") ?? 0
        return (status, String(text.dropLast(String(status).count)))
    }

    /// The access-log line of the `count`-th request (1-based) once it is written.
    func logLine(_ count: Int) -> [String: Any]? {
        let lines = proxy.accessLog(atLeast: count)
        return lines.count >= count ? lines[count - 1] : nil
    }

    /// A sample of `/metrics` once it equals `expected` (the access-log line of a request is
    /// written before its metrics are counted), or its last value after 30 s.
    func metric(_ sample: String, reaches expected: Int) -> Int? {
        var value: Int?
        eventually {
            value = try? proxy.metric(sample)
            return value == expected
        }
        return value
    }

    /// A sample of `/metrics` as a number (a histogram's `_sum`), nil when absent.
    func metricValue(_ sample: String) throws -> Double? {
        let client = try RawClient(
            port: try #require(proxy.adminPort, "no admin listener in \(proxy.stderr)"))
        client.send("GET /metrics HTTP/1.1\r\nHost: admin\r\nConnection: close\r\n\r\n")
        let text = String(decoding: try #require(client.readResponse()).body, as: UTF8.self)
        for entry in text.split(separator: "\n") where entry.hasPrefix(sample + " ") {
            return Double(entry.dropFirst(sample.count + 1))
        }
        return nil
    }

    func stop() {
        proxy.stop()
        try? FileManager.default.removeItem(atPath: files)
    }
}

/// The `scan` values of an access-log line's parts.
func scanResults(_ line: [String: Any]?) -> [String?] {
    ((line?["parts"] as? [[String: Any]]) ?? []).map { $0["scan"] as? String }
}
