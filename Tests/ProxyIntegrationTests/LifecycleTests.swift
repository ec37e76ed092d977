import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// SIGHUP reloads the rules without failing requests; SIGTERM drains.
@Suite(.serialized) struct LifecycleTests {
    static func config(upstream: String, version: String) -> String {
        """
        listen: 127.0.0.1:0
        workers: 2
        access_log: stdout
        upstream: \(upstream)
        routes:
          - match: { path: /upload }
            multipart:
              inject:
                - { name: version, value: "\(version)" }

        """
    }

    func upload(port: Int, payload: Int) throws -> (status: Int, version: String?) {
        let client = try RawClient(port: port)
        let body =
            "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.txt\"\r\n\r\n"
            + String(repeating: "x", count: payload) + "\r\n--b--\r\n"
        client.send(
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
                + body)
        guard let response = client.readResponse() else { return (0, nil) }
        let receipt = try? jsonObject(Data(response.body))
        let fields = (receipt?["fields"] as? [[String: Any]]) ?? []
        return (response.status, fields.first { $0["name"] as? String == "version" }?["value"] as? String)
    }

    @Test func reloadUnderLoadFailsNothingAndAppliesTheNewRules() throws {
        let upstream = try startDemoUpstream()
        let path = NSTemporaryDirectory() + "formgate-reload-\(UUID().uuidString).yaml"
        try Self.config(upstream: upstream.url, version: "1").write(
            toFile: path, atomically: true, encoding: .utf8)
        let proxy = try ServerProcess(formgateBinary, ["run", "-c", path], removingAtStop: [path])
        let results = Mutex<[(Int, String?)]>([])
        let port = proxy.port
        let load = (0..<4).map { _ in
            Thread {
                for _ in 0..<50 {
                    let result = (try? self.upload(port: port, payload: 20_000)) ?? (0, nil)
                    results.withLock { $0.append(result) }
                    Thread.sleep(forTimeInterval: 0.2)  // pacing only: 200 uploads spread over the reload
                }
            }
        }
        for thread in load { thread.start() }
        // Reload mid-load: once a fifth of the uploads are done.
        #expect(eventually(within: 120) { results.withLock { $0.count } >= 40 })
        try Self.config(upstream: upstream.url, version: "2").write(
            toFile: path, atomically: true, encoding: .utf8)
        kill(proxy.pid, SIGHUP)
        #expect(eventually { proxy.stderr.contains("configuration reloaded") }, "\(proxy.stderr)")
        let after = try upload(port: port, payload: 10)
        #expect(after.status == 200)
        #expect(after.version == "2")
        eventually(within: 300) { results.withLock { $0.count } >= 200 }
        let all = results.withLock { $0 }
        #expect(all.count == 200)
        #expect(all.allSatisfy { $0.0 == 200 }, "failed: \(all.filter { $0.0 != 200 })")
        #expect(Set(all.compactMap(\.1)).isSubset(of: ["1", "2"]))

        // A broken file is refused; the running rules stay.
        try "listen: 127.0.0.1:0\nroutes: [ {match: {path: /upload}, multipart: {drop_feilds: [x]}} ]\n"
            .write(
                toFile: path, atomically: true, encoding: .utf8)
        kill(proxy.pid, SIGHUP)
        #expect(eventually { proxy.stderr.contains("reload refused") }, "\(proxy.stderr)")
        #expect(proxy.stderr.contains("drop_feilds"))
        #expect(try upload(port: port, payload: 10).version == "2")
    }

    @Test func sigtermLetsAnUploadInFlightFinish() throws {
        let upstream = try startDemoUpstream()
        let path = NSTemporaryDirectory() + "formgate-drain-\(UUID().uuidString).yaml"
        try (Self.config(upstream: upstream.url, version: "1") + "timeouts: { drain: 20s }\n").write(
            toFile: path, atomically: true, encoding: .utf8)
        let proxy = try ServerProcess(formgateBinary, ["run", "-c", path], removingAtStop: [path])
        let size = 256 << 20
        let head = "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"big\"\r\n\r\n"
        let tail = "\r\n--b--\r\n"
        let client = try RawClient(port: proxy.port)
        client.send(
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: \(head.utf8.count + size + tail.utf8.count)\r\n\r\n"
                + head)
        let digest = Digest()
        var block = [UInt8](repeating: 0x5A, count: 1 << 20)
        for index in 0..<(size >> 20) {
            block[0] = UInt8(truncatingIfNeeded: index)
            digest.update(block)
            client.send(block)
            if index == 16 {
                kill(proxy.pid, SIGTERM)
                // Draining: the listeners close (a connect is refused) while this upload goes on.
                #expect(eventually { proxy.stderr.contains("draining") })
                #expect(
                    eventually { (try? RawClient(port: proxy.port)) == nil },
                    "new connections were still accepted while draining")
            }
        }
        client.send(tail)
        let response = try #require(client.readResponse(timeout: 60))
        #expect(response.status == 200)
        let receipt = try jsonObject(Data(response.body))
        let files = try #require(receipt["files"] as? [[String: Any]])
        #expect(files.first?["sha256"] as? String == digest.hex())
        #expect(response.head.contains("Connection: close"))
        proxy.process.waitUntilExit()
        #expect(proxy.process.terminationStatus == 0)
        #expect(proxy.stderr.contains("[info] formgate: stopped"))
    }

    @Test func sigusr1ReopensTheAccessLogAndLosesNothing() throws {
        let upstream = try startDemoUpstream()
        let directory = NSTemporaryDirectory() + "formgate-logs-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let log = directory + "/access.log"
        let proxy = try startProxy("upstream: \(upstream.url)\n", accessLog: log)
        func lines(_ path: String) -> Int {
            ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").count
        }
        for _ in 0..<30 { #expect(try upload(port: proxy.port, payload: 10).status == 200) }
        #expect(eventually { lines(log) >= 30 })
        try FileManager.default.moveItem(atPath: log, toPath: log + ".1")
        kill(proxy.pid, SIGUSR1)
        // Reopened: the writer has created the file again.
        #expect(eventually { FileManager.default.fileExists(atPath: log) })
        for _ in 0..<20 { #expect(try upload(port: proxy.port, payload: 10).status == 200) }
        eventually { lines(log) >= 20 }
        #expect(lines(log + ".1") == 30)
        #expect(lines(log) == 20)
    }

    /// A second FormGate on a port that is taken refuses to start, instead of sharing the port
    /// through SO_REUSEPORT and silently taking half the traffic.
    @Test func aTakenPortIsRefused() throws {
        let upstream = try startDemoUpstream()
        let first = try startProxy("upstream: \(upstream.url)\n")
        let path = NSTemporaryDirectory() + "formgate-test-\(UUID().uuidString).yaml"
        try "listen: \(first.address)\nupstream: \(upstream.url)\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        let second = try ServerProcess(
            formgateBinary, ["run", "-c", path], waitForListening: false, removingAtStop: [path])
        #expect(eventually { !second.process.isRunning }, "the second instance started on a taken port")
        second.stop()
        #expect(second.process.terminationStatus != 0)
        #expect(eventually { second.stderr.contains("address already in use") }, "\(second.stderr)")
        let client = try RawClient(port: first.port)
        client.send("GET /x HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(client.readResponse()?.status == 200)
    }
}
