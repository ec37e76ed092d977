import Foundation
import Testing

/// 100 concurrent 8 MiB uploads on one h2c connection through rewriting routes (issue 16,
/// acceptance 2): 99 go to the demo upstream, one to an upstream that reads at 1 MiB/s
/// (`Resources/slow_upstream.py`). Every file arrives byte-exact, the slow stream stalls
/// alone (the 99 finish while its upstream holds it and its window stays shut), the proxy's
/// memory stays under a bound derived from its windows and watermarks, and its descriptors go
/// back to where they were.
/// The 20 % figure is measured, not asserted here: `scripts/h2-slow-stream.py`.
@Suite(.serialized) struct HTTP2SlowStreamTests {
    static let streams = 100
    static let size = 8 << 20
    static let streamWindow = 1 << 20
    static let connectionWindow = 16 << 20

    struct Setup {
        let upstream: ServerProcess
        let slow: ServerProcess
        let proxy: ServerProcess

        /// The slow upstream holds a body once `pauseAt` bytes of it are in, until released.
        init(pauseAt: Int) throws {
            upstream = try startDemoUpstream()
            let script = UpstreamServerTests.resources.appendingPathComponent("slow_upstream.py").path
            slow = try ServerProcess(
                try python3(), [script, "--rate", "1048576", "--pause-at", String(pauseAt)])
            let rules =
                "    multipart:\n      rename_fields: { upload: file }\n      inject: [{ name: via, value: h2 }]\n"
            proxy = try startListeners(
                [
                    "{ address: 127.0.0.1:0, http2: { h2c: true, stream_window: \(streamWindow / 1024)KiB, "
                        + "connection_window: \(connectionWindow / 1024)KiB } }"
                ],
                "admin: 127.0.0.1:0\nupstream: \(upstream.url)\ntimeouts: { idle: 5s }\nroutes:\n"
                    + "  - match: { path: /upload }\n" + rules
                    + "  - match: { path: /slow }\n    upstream: \"\(slow.url)\"\n" + rules,
                workers: 1)
        }

        func stop() {
            proxy.stop()
            slow.stop()
            upstream.stop()
        }
    }

    /// The file an upstream received, as `file` (renamed from `upload`), with the injected field.
    static func expectFile(_ stream: [String: Any], upstream receipt: [String: Any]) {
        let index = stream["index"] as? Int ?? -1
        let files = receipt["files"] as? [[String: Any]] ?? []
        #expect(files.count == 1, "stream \(index): \(receipt)")
        #expect(files.first?["name"] as? String == "file", "stream \(index)")
        #expect(files.first?["filename"] as? String == "file-\(index).bin", "stream \(index)")
        #expect(files.first?["size"] as? Int == size, "stream \(index)")
        let sent = stream["sha256"] as? String
        #expect(sent != nil && files.first?["sha256"] as? String == sent, "stream \(index)")
        let fields = (receipt["fields"] as? [[String: Any]] ?? []).map {
            "\($0["name"] ?? "")=\($0["value"] ?? "")"
        }
        #expect(
            fields.contains("via=h2") && fields.contains("title=stream-\(index)"),
            "stream \(index): \(fields)")
    }

    /// One small upload, then the proxy's descriptors and resident memory once its pooled
    /// upstream connection has closed (`timeouts.idle`, 5 s) and the count stops falling. What
    /// the process opens once (/dev/urandom, at the first request) is then not taken for a leak.
    static func baseline(_ setup: Setup, script: String) throws -> (descriptors: Int, residentKiB: Int) {
        let warmUp = try run(
            try python3(),
            [script, "127.0.0.1", String(setup.proxy.port), "--streams", "1", "--size", "1000"])
        #expect(warmUp.status == 0)
        var descriptors = setup.proxy.openDescriptors
        while eventually(within: 8, { setup.proxy.openDescriptors < descriptors }) {
            descriptors = setup.proxy.openDescriptors
        }
        return (descriptors, setup.proxy.residentKiB)
    }

    /// The most request-body memory these settings let the proxy hold: the connection window's
    /// bytes not yet given back (each stream's window counts inside it), and per stream, on its
    /// way upstream, the output watermark plus one forwarding step over it (a step moves what the
    /// stream's input holds, at most its window), plus the client socket's input up to the
    /// watermark: 16 MiB + 100 × (256 KiB + 1 MiB) + 256 KiB = 141.25 MiB. Buffering by upload
    /// size would be 800 MiB.
    static var memoryBoundKiB: Int {
        let watermark = 256 << 10
        return (connectionWindow + streams * (watermark + streamWindow) + watermark) / 1024
    }

    /// The slow stream was held back alone: checks what the client recorded when the last of
    /// the others had its answer, and returns those figures.
    static func expectHeldAlone(_ answer: [String: Any], _ streams: [[String: Any]]) throws
        -> (othersDone: Double, received: Int, sent: Int)
    {
        // When the 99th other stream had its answer, the slow upstream had had only part of the
        // slow body and answered nothing, the client could not yet send the rest of it (the
        // proxy kept the stream's window shut: between the 1 MiB read and the client lie the
        // kernel's send buffer to the slow upstream, at most tcp_wmem's 4 MiB, and the
        // proxy's 2.25 MiB of window, watermark and step; the client had sent 6.3 to 6.7 MiB of
        // 8 MiB in the runs seen), and its answer came after.
        let slowStream = try #require(streams.first { $0["path"] as? String == "/slow" })
        let slowBody = try #require((slowStream["receipt"] as? [String: Any])?["body_size"] as? Int)
        let side = try #require(answer["side_when_others_done"] as? [String: Any])
        let receivedThen = try #require(side["received"] as? Int)
        #expect(receivedThen < slowBody, "the slow upstream had \(receivedThen) of \(slowBody) bytes")
        #expect(side["answered"] as? Int == 0)
        let sentThen = try #require((answer["sent_when_others_done"] as? [String: Any])?["0"] as? Int)
        #expect(sentThen < slowStream["length"] as? Int ?? 0, "the client had sent \(sentThen) bytes")
        let othersDone = try #require(answer["others_done_at"] as? Double)
        #expect(try #require(slowStream["end"] as? Double) > othersDone)
        return (othersDone, receivedThen, sentThen)
    }

    @Test func aSlowUpstreamStallsItsStreamAloneAndEveryFileArrivesByteExact() throws {
        // The slow upstream reads 1 MiB at 1 MiB/s, then holds the body until the client, once
        // the 99 others are answered, releases it. The ordering checked by `expectHeldAlone`
        // depends on no speed of this machine, only on the stalled stream not holding the
        // others back (if it did, they would never finish and the client's deadline would fail
        // the test). Unheld, 1 MiB/s is about the pace the proxy gives each of 100 streams
        // here, so "before the slow upstream had it all" would be a race.
        let setup = try Setup(pauseAt: 1 << 20)
        defer { setup.stop() }
        let script = UpstreamServerTests.resources.appendingPathComponent("h2_many.py").path
        let baseline = try Self.baseline(setup, script: script)
        let result = try run(
            try python3(),
            [
                script, "127.0.0.1", String(setup.proxy.port), "--streams", String(Self.streams), "--size",
                String(Self.size), "--slow", "1", "--side", setup.slow.url, "--deadline", "600",
            ])
        let answer = try jsonObject(result.output)
        #expect(result.status == 0, "\(answer["error"] ?? "") \(setup.proxy.stderr.suffix(400))")
        let streams = answer["streams"] as? [[String: Any]] ?? []
        #expect(streams.count == Self.streams)
        for stream in streams {
            #expect(stream["status"] as? Int == 200, "\(stream)")
            Self.expectFile(stream, upstream: stream["receipt"] as? [String: Any] ?? [:])
        }
        #expect(streams.filter { $0["path"] as? String == "/slow" }.count == 1)
        #expect(Set(streams.compactMap { $0["sha256"] as? String }).count == Self.streams, "distinct files")

        let held = try Self.expectHeldAlone(answer, streams)

        // Every stream was one h2 exchange of the one connection the client opened.
        let log = setup.proxy.accessLog(atLeast: Self.streams + 1).dropFirst()
        #expect(log.filter { $0["protocol"] as? String == "h2" }.count == Self.streams)
        #expect(Set(log.compactMap { $0["stream"] as? Int }).count == Self.streams)

        let peakKiB = setup.proxy.peakRSSKiB
        #expect(
            peakKiB - baseline.residentKiB < Self.memoryBoundKiB,
            "peak \(peakKiB) KiB from \(baseline.residentKiB) KiB")
        // Pooled upstream connections close after `timeouts.idle` (5 s).
        let descriptorsBack = eventually(within: 60) { setup.proxy.openDescriptors <= baseline.descriptors }
        #expect(descriptorsBack, "\(setup.proxy.openDescriptors) descriptors, \(baseline.descriptors) before")
        recordFigure(
            "h2-slow-stream",
            [
                "peak_rss_kib": peakKiB, "baseline_rss_kib": baseline.residentKiB,
                "others_done_s": held.othersDone, "slow_received_then": held.received,
                "slow_sent_then": held.sent,
            ])
    }
}
