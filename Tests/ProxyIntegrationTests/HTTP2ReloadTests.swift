import Foundation
import Synchronization
import Testing

/// SIGHUP over a held HTTP/2 connection: the new rules apply to the streams opened after the
/// reload, on that connection and on new ones, while a stream in flight across the reload
/// keeps the rules it started with and finishes byte-exact.
@Suite(.serialized) struct HTTP2ReloadTests {
    /// An h2c listener and one route injecting `rev=REVISION` as the last field, so the
    /// in-flight stream writes it only after the reload.
    static func config(upstream: String, revision: String) -> String {
        tlsConfig(
            ["{ address: 127.0.0.1:0, http2: { h2c: true } }"],
            "admin: 127.0.0.1:0\nupstream: \(upstream)\nroutes:\n  - match: { path: /upload }\n    multipart:\n"
                + "      inject: [{ name: rev, value: \(revision), position: last }]\n", workers: 1)
    }

    /// A running `h2_client.py reload`: its stdout's JSON lines as they come, and its stdin.
    final class ScenarioClient {
        let process = Process()
        let input = Pipe()
        private let output = Pipe()
        private let received = Transcript()
        private var reader: PipeReader?

        /// What the client printed, filled by the pipe's reader.
        final class Transcript: Sendable {
            let text = Mutex<String>("")
        }

        init(port: Int, file: String) throws {
            process.executableURL = URL(fileURLWithPath: try python3())
            process.arguments = [
                UpstreamServerTests.resources.appendingPathComponent("h2_client.py").path, "127.0.0.1",
                String(port), "reload", "--file", file,
            ]
            process.standardInput = input
            process.standardOutput = output
            try process.run()
            reader = PipeReader(output) { [received] data in
                received.text.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }

        /// The complete JSON lines printed so far.
        var events: [[String: Any]] {
            received.text.withLock { $0 }.split(separator: "\n").compactMap { try? jsonObject(Data($0.utf8)) }
        }

        func waitFor(_ event: String) -> [String: Any]? {
            var found: [String: Any]?
            eventually(within: 120) {
                found = events.first { $0["event"] as? String == event }
                return found != nil
            }
            return found
        }

        func stop() {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            reader?.wait()
            reader = nil
        }
    }

    static func fields(_ answer: [String: Any]) -> [String] {
        let receipt = answer["body"] as? [String: Any] ?? [:]
        return (receipt["fields"] as? [[String: Any]] ?? []).map {
            "\($0["name"] as? String ?? "")=\($0["value"] as? String ?? "")"
        }
    }

    static func expectFile(_ answer: [String: Any], _ file: HTTP2ClientMatrixTests.File, size: Int) {
        #expect(answer["status"] as? Int == 200, "\(answer)")
        let receipt = answer["body"] as? [String: Any] ?? [:]
        let files = receipt["files"] as? [[String: Any]] ?? []
        #expect(files.count == 1, "\(receipt)")
        #expect(files.first?["size"] as? Int == size)
        #expect(files.first?["sha256"] as? String == file.sha256)
    }

    @Test func sighupAppliesNewRulesToNewStreamsAndTheStreamInFlightKeepsItsOwn() throws {
        let upstream = try startDemoUpstream()
        defer { upstream.stop() }
        let directory = NSTemporaryDirectory() + "formgate-h2-reload-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let size = 8 << 20
        let file = try HTTP2ClientMatrixTests.write(directory + "/upload.bin", count: size)
        let path = directory + "/formgate.yaml"
        try Self.config(upstream: upstream.url, revision: "a").write(
            toFile: path, atomically: true, encoding: .utf8)
        let proxy = try ServerProcess(formgateBinary, ["run", "-c", path])
        defer { proxy.stop() }

        let client = try ScenarioClient(port: proxy.port, file: file.path)
        defer { client.stop() }
        let inflight = try #require(client.waitFor("inflight"), "\(client.events)")
        #expect(inflight["stream"] as? Int == 3)
        // The proxy holds the stream's exchange (its upstream request is open) on one connection.
        #expect(eventually { (try? proxy.metric("formgate_uploads_in_flight")) == 1 })
        #expect(try proxy.metric("formgate_active_connections") == 1)

        try Self.config(upstream: upstream.url, revision: "b").write(
            toFile: path, atomically: true, encoding: .utf8)
        kill(proxy.pid, SIGHUP)
        #expect(eventually { proxy.stderr.contains("configuration reloaded") }, "\(proxy.stderr)")
        #expect(try proxy.metric("formgate_config_reloads_total{result=\"ok\"}") == 1)
        client.input.fileHandleForWriting.write(Data("reloaded\n".utf8))

        let done = try #require(client.waitFor("done"), "\(client.events)")
        client.process.waitUntilExit()
        #expect(client.process.terminationStatus == 0)
        let answers = client.events.filter { $0["event"] as? String == "answer" }
        try #require(answers.count == 3, "\(client.events)")
        #expect(answers.map { $0["stream"] as? Int } == [1, 3, 5])
        // One TCP connection: the client's local port never changed.
        let localPort = try #require(done["local_port"] as? Int)
        #expect(answers.allSatisfy { $0["local_port"] as? Int == localPort })
        #expect(Self.fields(answers[0]) == ["title=first", "rev=a"])
        #expect(Self.fields(answers[1]) == ["title=inflight", "rev=a"], "started before the reload")
        #expect(Self.fields(answers[2]) == ["title=after", "rev=b"], "opened after it, same connection")
        for answer in answers { Self.expectFile(answer, file, size: size) }

        // A new connection gets the new rules too.
        let result = try run(
            try python3(),
            [
                UpstreamServerTests.resources.appendingPathComponent("h2_client.py").path, "127.0.0.1",
                String(proxy.port), "upload", "--file", file.path, "--field", "title=new",
            ])
        let fresh = try jsonObject(result.output)
        #expect(fresh["local_port"] as? Int != localPort)
        #expect(Self.fields(fresh) == ["title=new", "rev=b"])
        Self.expectFile(fresh, file, size: size)

        let lines = proxy.accessLog(atLeast: 4)
        #expect(lines.map { $0["stream"] as? Int } == [1, 3, 5, 1], "streams 1, 3, 5 on one connection")
        #expect(lines.allSatisfy { $0["protocol"] as? String == "h2" && $0["status"] as? Int == 200 })
    }
}
