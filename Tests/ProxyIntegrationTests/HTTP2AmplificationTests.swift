import Foundation
import Testing

/// Issue 26 item 5, "Amplification", from outside (`Resources/h2_amplify.py`): header blocks
/// that decode to a thousand times what they take on the wire, and a client that provokes
/// SETTINGS and PING acknowledgements without ever reading them.
@Suite(.serialized) struct HTTP2AmplificationTests {
    static let script = UpstreamServerTests.resources.appendingPathComponent("h2_amplify.py").path

    struct Setup {
        let upstream: ServerProcess
        let proxy: ServerProcess

        init() throws {
            upstream = try startDemoUpstream()
            proxy = try startListeners(
                ["{ address: 127.0.0.1:0, http2: { h2c: true } }"],
                "upstream: \(upstream.url)\ntimeouts: { idle: 3s }\nroutes:\n  - match: { path: /upload }\n"
                    + "    multipart: {}\n", workers: 1)
        }

        func stop() {
            proxy.stop()
            upstream.stop()
        }
    }

    /// The process's user and system CPU time, in seconds (`/proc/PID/stat`, all its threads).
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return -1 }
        // Fields after the command's closing parenthesis start at field 3 (state).
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Runs `h2_amplify.py` against the proxy; returns its record and the proxy's CPU seconds.
    static func amplify(_ setup: Setup, _ arguments: [String]) throws -> ([String: Any], Double) {
        let before = cpuSeconds(setup.proxy.pid)
        let result = try run(try python3(), [script, "127.0.0.1", String(setup.proxy.port)] + arguments)
        #expect(result.status == 0)
        return (try jsonObject(result.output), cpuSeconds(setup.proxy.pid) - before)
    }

    /// 50 blocks of 10,000 references to one 4,000-byte table entry (10 KiB on the wire, 40 MB
    /// decoded, each) on one connection: each is reset once its list passes twice
    /// `header_bytes`, and they cost the proxy about what 50 blocks of ordinary fields just
    /// over `header_bytes` do (0.03 CPU-seconds each run, debug build; the references took
    /// 31.6 s before). The bound leaves a wide margin for a loaded machine.
    @Test func headerBlocksOfRepeatedReferencesStopBeingDecoded() throws {
        let setup = try Setup()
        defer { setup.stop() }
        let (ordinary, ordinaryCPU) = try Self.amplify(setup, ["--mode", "ordinary"])
        #expect((ordinary["status"] as? [String: Int])?.values.allSatisfy { $0 == 431 } == true)
        let (refs, refsCPU) = try Self.amplify(setup, ["--mode", "refs", "--deadline", "120"])
        #expect((refs["unanswered"] as? [Int])?.isEmpty == true, "\(refs)")
        let resets = refs["rst"] as? [String: Int] ?? [:]
        #expect(resets.count == 50 && resets.values.allSatisfy { $0 == 11 }, "\(resets)")
        #expect(refs["goaway"] is NSNull && refs["closed"] as? Bool == false)
        recordFigure(
            "h2-header-amplification",
            ["ordinary_cpu_seconds": ordinaryCPU, "references_cpu_seconds": refsCPU])
        #expect(refsCPU < 2.0, "50 amplified blocks cost \(refsCPU) CPU-seconds (ordinary: \(ordinaryCPU))")
        // Another connection is served.
        let file = NSTemporaryDirectory() + "formgate-amplify-\(UUID().uuidString).bin"
        try Data(repeating: 0x61, count: 100_000).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let uploads = UpstreamServerTests.resources.appendingPathComponent("h2_uploads.py").path
        let upload = try run(
            try python3(), [uploads, "http://127.0.0.1:\(setup.proxy.port)/upload", "1", file])
        #expect((try jsonObject(upload.output))["statuses"] as? [Int] == [200])
    }

    /// SETTINGS and PINGs in bursts of fewer than libnghttp2's 1,000 queued acknowledgements,
    /// never a byte read: the proxy stops writing the acknowledgements out and stops reading
    /// once its output passes the high watermark, so its memory stays flat (it grew 15 MiB in
    /// 10 s before) and the connection ends (the flood cap or `timeouts.idle`, 3 s here)
    /// while the client still sends (it sent for as long as it was let before).
    @Test func acknowledgementsAClientDoesNotReadDoNotPileUp() throws {
        let setup = try Setup()
        defer { setup.stop() }
        let (flood, _) = try Self.amplify(
            setup, ["--mode", "ackflood", "--seconds", "30", "--pid", String(setup.proxy.pid)])
        #expect(flood["closed"] as? Bool == true, "\(flood)")
        let start = flood["rss_start_kib"] as? Int ?? 0
        let peak = flood["rss_max_kib"] as? Int ?? .max
        recordFigure("h2-ack-flood", ["rss_growth_kib": peak - start, "sent_bytes": flood["bytes"] ?? 0])
        #expect(peak - start < 4 << 10, "the proxy grew from \(start) to \(peak) KiB: \(flood)")
    }
}
