import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Descriptor exhaustion (nginx's way): the connection cap is clamped to RLIMIT_NOFILE at start,
/// and a worker whose `accept()` fails with EMFILE pauses accepting instead of spinning, logs
/// the condition a few times with a count, counts it in /metrics and serves again once
/// descriptors are free. The proxy runs under `prlimit --nofile=256:256` with 400 idle clients.
@Suite(.serialized) struct DescriptorLimitTests {
    static let idleClients = 400
    /// The window over which the proxy's CPU time is read while the idle clients wait.
    static let windowSeconds: UInt32 = 3

    /// A proxy with an upload route, started by `prlimit` (which execs it: same pid).
    func startLimitedProxy(upstream: ServerProcess) throws -> ServerProcess {
        let path = NSTemporaryDirectory() + "formgate-test-\(UUID().uuidString).yaml"
        try """
        listen: 127.0.0.1:0
        workers: 2
        admin: 127.0.0.1:0
        access_log: off
        upstream: \(upstream.url)
        timeouts: { header: 120s, idle: 120s }
        routes:
          - match: { path: /upload }
            multipart: { rename_fields: { f: file } }
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return try ServerProcess(
            try tool("prlimit"), ["--nofile=256:256", formgateBinary, "run", "-c", path],
            removingAtStop: [path])
    }

    /// The test process holds the idle clients: room for them whatever its own soft limit.
    func raiseOwnDescriptorLimit() {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// User plus system CPU seconds of `pid` (/proc/PID/stat fields 14 and 15).
    func cpuSeconds(_ pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.index(after: try #require(stat.lastIndex(of: ")")))...].split(separator: " ")
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Waits for `condition` up to `seconds` (generous: the machine is shared).
    func waitFor(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if try condition() { return true }
            usleep(20_000)
        }
        return try condition()
    }

    func metrics(_ proxy: ServerProcess) throws -> [String: Double] {
        let port = try #require(
            Int(
                proxy.stderr.components(separatedBy: "admin on 127.0.0.1:").last?.prefix { $0.isNumber } ?? ""
            ))
        let client = try RawClient(port: port)
        client.send("GET /metrics HTTP/1.1\r\nHost: admin\r\n\r\n")
        let response = try #require(client.readResponse())
        var out: [String: Double] = [:]
        for line in String(decoding: response.body, as: UTF8.self).split(separator: "\n")
        where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            out[String(line[..<space])] = Double(line[line.index(after: space)...])
        }
        return out
    }

    /// Uploads a 64 KiB file and checks what the upstream received (name and sha256).
    func expectUploadServed(_ proxy: ServerProcess) throws {
        let content = (0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let body =
            Array(
                "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.bin\"\r\n\r\n".utf8)
            + content + Array("\r\n--b--\r\n".utf8)
        let client = try RawClient(port: proxy.port)
        client.send(
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                + "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n")
        client.send(body)
        // The worker first accepts (and closes) the departed idle clients still in its backlog.
        let response = try #require(client.readResponse(timeout: 60))
        #expect(response.status == 200)
        let receipt = try jsonObject(Data(response.body))
        let files = try #require(receipt["files"] as? [[String: Any]])
        #expect(files.count == 1)
        #expect(files.first?["name"] as? String == "file")
        #expect(files.first?["size"] as? Int == content.count)
        #expect(files.first?["sha256"] as? String == Digest.hex(content))
    }

    /// Connections waiting in the accept queues of the listeners on `port` (the rx_queue of
    /// LISTEN sockets in /proc/net/tcp); nil when unreadable.
    func acceptQueueLength(port: Int) -> Int? {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return nil }
        let local = ":" + String(format: "%04X", port)
        var waiting = 0
        for line in table.split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 4, fields[1].hasSuffix(local), fields[3] == "0A" else { continue }
            waiting += Int(fields[4].split(separator: ":").last ?? "", radix: 16) ?? 0
        }
        return waiting
    }

    func lineCount(_ text: String) -> Int {
        text.split(separator: "\n").count
    }

    @Test func theConnectionCapIsClampedToWhatTheLimitHolds() throws {
        raiseOwnDescriptorLimit()
        let upstream = try startDemoUpstream()
        let proxy = try startLimitedProxy(upstream: upstream)
        defer { proxy.stop() }
        // 256 descriptors, 32 + 16 per worker reserved, 3 per connection: 64 (32 per worker).
        #expect(proxy.stderr.contains("limits.connections: 10000 clamped to 64 client connections"))
        let linesBefore = lineCount(proxy.stderr)
        var idle: [RawClient] = []
        for _ in 0..<Self.idleClients { idle.append(try RawClient(port: proxy.port)) }
        #expect(try waitFor(30) { try metrics(proxy)["formgate_active_connections"] == 64 })
        let cpuBefore = try cpuSeconds(proxy.pid)
        sleep(Self.windowSeconds)
        let cpu = try cpuSeconds(proxy.pid) - cpuBefore
        #expect(cpu < 0.5, "CPU seconds over \(Self.windowSeconds) s with 400 idle clients: \(cpu)")
        let values = try metrics(proxy)
        #expect(values["formgate_active_connections"] == 64)
        #expect(values["formgate_accept_errors_total{reason=\"descriptors\"}"] == 0)
        #expect(lineCount(proxy.stderr) == linesBefore, "\(proxy.stderr)")
        idle.removeAll()
        try expectUploadServed(proxy)
    }

    @Test func outOfDescriptorsPausesAcceptingAndRecovers() throws {
        raiseOwnDescriptorLimit()
        let upstream = try startDemoUpstream()
        let proxy = try startLimitedProxy(upstream: upstream)
        defer { proxy.stop() }
        // Below the clamped cap, descriptors run out first: lower the running proxy's limit to
        // 24 above what it holds now (as another process sharing the limit, or an operator,
        // would), so accept() fails with EMFILE while the listeners still want connections.
        let baseline = proxy.openDescriptors
        let limit = baseline + 24
        let lowered = try run(try tool("prlimit"), ["--pid", "\(proxy.pid)", "--nofile=\(limit):\(limit)"])
        #expect(lowered.status == 0)
        let linesBefore = lineCount(proxy.stderr)
        var idle: [RawClient] = []
        for _ in 0..<Self.idleClients { idle.append(try RawClient(port: proxy.port)) }
        #expect(waitFor(30) { proxy.stderr.contains("accept() failed") })
        let cpuBefore = try cpuSeconds(proxy.pid)
        sleep(Self.windowSeconds)
        let cpu = try cpuSeconds(proxy.pid) - cpuBefore
        #expect(cpu < 0.5, "CPU seconds over \(Self.windowSeconds) s out of descriptors: \(cpu)")
        // Each worker: its first failure at once, then at most one line per 10 s.
        let added = lineCount(proxy.stderr) - linesBefore
        #expect(added >= 1 && added <= 6, "\(proxy.stderr)")
        #expect(proxy.stderr.contains("Too many open files"))
        #expect(!proxy.stderr.contains("Error from accept() call"))
        idle.removeAll()
        // Until the workers have accepted and closed every departed client still in their
        // backlogs, an upload accepted among them could find no descriptor for its upstream
        // connection (a 502, as in any recovery): wait for empty accept queues and descriptors
        // back at their baseline.
        #expect(
            waitFor(60) {
                acceptQueueLength(port: proxy.port) == 0 && proxy.openDescriptors <= baseline + 2
            })
        try expectUploadServed(proxy)
        let failures = try metrics(proxy)["formgate_accept_errors_total{reason=\"descriptors\"}"] ?? 0
        #expect(failures >= 1)
        recordFigure(
            "descriptor-exhaustion",
            [
                "idle_clients": Self.idleClients, "descriptor_limit": limit,
                "window_seconds": Self.windowSeconds,
                "cpu_seconds": (cpu * 100).rounded() / 100, "stderr_lines": added,
                "accept_errors": Int(failures),
            ])
    }
}
