import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Descriptor exhaustion (nginx's way): the connection cap is clamped to RLIMIT_NOFILE at start,
/// and a worker whose `accept()` fails with EMFILE pauses accepting instead of spinning, logs
/// the condition a few times with a count, counts it in /metrics and serves again once
/// descriptors are free. The proxy runs under `prlimit --nofile=256:256` with 400 idle clients.
///
/// Verdicts are events and counters, never a wall-clock window: at the cap, the clients past it
/// are still in the kernel's accept queues (the listeners are off: nothing accepted, nothing
/// dropped); out of descriptors, failed `accept()` calls come at most one per pause per worker,
/// as the proxy's own report and /metrics count them (a loop that retried at once would count
/// thousands), however slow the machine.
@Suite(.serialized) struct DescriptorLimitTests {
    static let idleClients = 400
    static let workers = 2

    /// A proxy with an upload route, started by `prlimit` (which execs it: same pid).
    func startLimitedProxy(upstream: ServerProcess) throws -> ServerProcess {
        let path = NSTemporaryDirectory() + "formgate-test-\(UUID().uuidString).yaml"
        try """
        listen: 127.0.0.1:0
        workers: \(Self.workers)
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
        // At the cap the workers' listeners are off: the clients past it wait in the accept
        // queues, none accepted and dropped (an enabled listener accepts whatever is queued).
        let pastTheCap = Self.idleClients - 64
        #expect(
            try waitFor(30) {
                try metrics(proxy)["formgate_active_connections"] == 64
                    && acceptQueueLength(port: proxy.port) == pastTheCap
            },
            "queued \(String(describing: acceptQueueLength(port: proxy.port))), want \(pastTheCap)")
        let values = try metrics(proxy)
        #expect(acceptQueueLength(port: proxy.port) == pastTheCap)
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
        let started = Date()
        var idle: [RawClient] = []
        for _ in 0..<Self.idleClients { idle.append(try RawClient(port: proxy.port)) }
        #expect(waitFor(30) { proxy.stderr.contains("accept() failed") })
        let (window, cpu) = try expectAcceptingPauses(proxy)
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
        // The whole episode, counted once the admin listener can accept again: at most one
        // failure per pause per worker over the time the test watched (its clock runs around
        // the episode, so a slow machine only widens the bound).
        let failures = try metrics(proxy)[Self.acceptFailures] ?? 0
        let episode = Date().timeIntervalSince(started)
        #expect(failures >= 1)
        #expect(
            failures <= Double(Self.workers) * (episode / Self.pause + 1),
            "\(failures) failed accepts in \(episode) s with a 0.5 s pause per worker")
        recordFigure(
            "descriptor-exhaustion",
            [
                "idle_clients": Self.idleClients, "descriptor_limit": limit,
                "window_seconds": (window * 10).rounded() / 10,
                "cpu_seconds": (cpu * 100).rounded() / 100, "stderr_lines": added,
                "accept_errors": Int(failures),
            ])
    }

    static let acceptFailures = "formgate_accept_errors_total{reason=\"descriptors\"}"
    /// The shortest time between two failed `accept()` calls of a worker: its listener's 0.5 s
    /// pause, less 10 % for the loop's clock (a timer runs from the time cached at the start
    /// of the loop iteration, a little before the failure).
    static let pause = 0.45

    /// The failures a worker's later `accept() failed N times in the last S s` lines report
    /// (its first line, written at once, names no span).
    func pacedReports(_ stderr: String) -> [(count: Int, seconds: Double)] {
        stderr.split(separator: "\n").compactMap { line in
            guard let head = line.firstRange(of: "accept() failed "),
                let span = line.firstRange(of: " in the last ")
            else { return nil }
            let count = Int(line[head.upperBound...].prefix { $0.isNumber })
            let seconds = Double(line[span.upperBound...].prefix { $0.isNumber || $0 == "." })
            guard let count, let seconds else { return nil }
            return (count, seconds)
        }
    }

    /// Out of descriptors, each worker's listener pauses `Listener.errorPauseMilliseconds`
    /// (500) after a failed `accept()`, then tries again. The admin listener cannot accept
    /// either, so the proxy's own report says it: waits for a worker's second line (10 s after
    /// its first), which proves accepting resumed and failed again, and expects its count to be
    /// at most one failure per pause over the span it names (a loop that retried at once would
    /// count thousands). Returns the wait and the proxy's CPU seconds meanwhile (figures).
    func expectAcceptingPauses(_ proxy: ServerProcess) throws -> (seconds: Double, cpu: Double) {
        let started = Date()
        let cpuBefore = try cpuSeconds(proxy.pid)
        let reported = waitFor(60) { !pacedReports(proxy.stderr).isEmpty }
        let seconds = Date().timeIntervalSince(started)
        let cpu = try cpuSeconds(proxy.pid) - cpuBefore
        #expect(reported, "no second accept() report: \(proxy.stderr)")
        for report in pacedReports(proxy.stderr) {
            // The span is rounded to 0.1 s.
            #expect(
                Double(report.count) <= (report.seconds + 0.1) / Self.pause + 1,
                "\(report.count) failed accepts in \(report.seconds) s with a 0.5 s pause")
        }
        return (seconds, cpu)
    }
}
