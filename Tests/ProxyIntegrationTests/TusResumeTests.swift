import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A 256 MiB tus upload whose connection is cut, then resumed from the offset HEAD reports:
/// cut by the client (the socket closed mid-PATCH), and by the server (`kill -9` of FormGate
/// mid-PATCH, then a restart on the same store). Each arrives upstream byte for byte (the demo
/// upstream's SHA-256 of the delivered file part), no acknowledged byte is lost, and
/// FormGate's memory stays bounded whatever the upload's size.
@Suite(.serialized) struct TusResumeTests {
    static let size: Int64 = 256 << 20
    /// FormGate's peak RSS for a 256 MiB upload (it holds a 512 KiB window per PATCH).
    static let rssBoundKiB = 150 * 1024

    /// Adds `figures` to `.build/test-figures/tus-resume.json` (each test writes its own keys).
    static func addFigures(_ figures: [String: Any]) {
        let file = packageRoot.appendingPathComponent(".build/test-figures/tus-resume.json")
        var merged = (try? Data(contentsOf: file)).flatMap { try? jsonObject($0) } ?? [:]
        merged.merge(figures) { $1 }
        merged["upload_bytes"] = size
        merged["rss_bound_kib"] = rssBoundKiB
        recordFigure("tus-resume", merged)
    }

    /// Polls HEAD until `condition` holds for its offset; the last offset seen.
    static func headOffset(
        _ client: TusClient, _ id: String, within seconds: Double = 30, until condition: (Int64) -> Bool
    ) -> Int64 {
        var offset: Int64 = -1
        eventually(within: seconds) {
            offset = (try? client.headOf(id, timeout: 5))?.offset ?? -1
            return condition(offset)
        }
        return offset
    }

    /// Streams the rest of `data` from `offset` in one PATCH and checks what the demo upstream
    /// received: one file part of the whole length and digest, named as the metadata says, and
    /// the title field. Returns the completing PATCH's answer.
    static func resume(
        _ client: TusClient, _ id: String, from offset: Int64, _ data: SeededFile, filename: String,
        title: String, label: String
    ) throws -> TusReply {
        let patch = try client.openPatch(id, offset: offset, contentLength: size - offset)
        let sent = data.stream(to: patch, from: offset, count: size - offset)
        let answer = try TusClient.response(patch, "\(label): resuming PATCH", timeout: 300)
        #expect(sent == size - offset, "\(label): the resuming PATCH's body was not all taken: \(answer)")
        try #require(answer.status == 200, "\(label): \(answer) (seed \(data.seed))")
        #expect(answer.offset == size, "\(label): \(answer.head)")
        let receipt = try jsonObject(Data(answer.body))
        #expect(receipt["method"] as? String == "POST" && receipt["path"] as? String == "/upload", "\(label)")
        let files = try #require(receipt["files"] as? [[String: Any]], "\(label): \(answer)")
        try #require(files.count == 1, "\(label): \(files)")
        #expect(files[0]["name"] as? String == "file")
        #expect(files[0]["filename"] as? String == filename)
        #expect((files[0]["size"] as? NSNumber)?.int64Value == size, "\(label): \(files[0])")
        #expect(
            files[0]["sha256"] as? String == data.sha256,
            "\(label): the delivered file differs from the upload (seed \(data.seed))")
        let fields = receipt["fields"] as? [[String: Any]] ?? []
        #expect(fields.count == 1 && fields.first?["name"] as? String == "title", "\(label): \(fields)")
        #expect(fields.first?["value"] as? String == title)
        return answer
    }

    /// The delivery's own access-log line (exactly one POST to the deliver path, answered 200)
    /// and the completing PATCH's line (`tus.event` completed at the full offset).
    static func checkLog(_ proxy: ServerProcess, id: String, label: String) {
        #expect(eventually { !logLines(proxy, path: "/upload").isEmpty }, "\(label): no delivery line")
        let delivered = logLines(proxy, path: "/upload")
        #expect(delivered.count == 1, "\(label): \(delivered)")
        #expect(delivered.first?["method"] as? String == "POST" && delivered.first?["status"] as? Int == 200)
        func completed() -> [[String: Any]] {
            proxy.accessLog.filter { line in
                line["method"] as? String == "PATCH" && tusObject(line)?["event"] as? String == "completed"
            }
        }
        // The PATCH's line is written once its answer is sent: it may follow the client's read.
        _ = eventually { !completed().isEmpty }
        let completed = completed()
        #expect(completed.count == 1, "\(label): \(proxy.accessLog)")
        if let tus = completed.first.flatMap(tusObject) {
            #expect(tus["id"] as? String == id && (tus["offset"] as? NSNumber)?.int64Value == size, "\(tus)")
            #expect((tus["length"] as? NSNumber)?.int64Value == size, "\(tus)")
        }
    }

    /// The client closes its socket mid-PATCH (the head declared the whole file): HEAD reports
    /// the bytes that arrived, the stored bytes are those of the file, and a PATCH from there
    /// completes the upload byte for byte.
    @Test func aPatchCutByTheClientResumesFromTheBytesThatArrived() throws {
        let seed: UInt64 = 0x7475_735F_6375_7401
        let data = try SeededFile(size: Self.size, seed: seed)
        let directory = try TusStoreDirectory()
        let upstream = try startDemoUpstream()
        defer { upstream.stop() }
        let proxy = try startProxy(tusConfig(upstream: upstream.url, store: directory.store), workers: 2)
        defer { proxy.stop() }
        let client = TusClient(port: proxy.port)
        let id = try client.createID(
            length: Self.size, metadata: [("filename", "cut.bin"), ("title", "cut")])
        let started = Date()

        let cutAt: Int64 = (100 << 20) + 12_345
        let sent: Int64
        do {
            let cut = try client.openPatch(id, offset: 0, contentLength: Self.size)
            sent = data.stream(to: cut, from: 0, count: cutAt)
            // `cut` closes its socket here, mid-body.
        }
        try #require(sent == cutAt, "the cut PATCH's bytes were not all taken")
        let offset = Self.headOffset(client, id) { $0 == sent }
        #expect(offset == sent, "HEAD after the cut reports \(offset), \(sent) bytes arrived (seed \(seed))")
        // Whatever HEAD says, resuming from it must give the file.
        try #require(offset >= 0 && offset <= sent, "HEAD: \(offset)")
        #expect(
            directory.binSize(id) == offset, "the .bin holds \(directory.binSize(id)) bytes, HEAD \(offset)")
        #expect(
            sha256OfFile("\(directory.store)/\(id).bin", prefix: offset) == data.sha256(prefix: offset),
            "the stored bytes differ from the file's first \(offset) (seed \(seed))")
        #expect(directory.strayFiles.isEmpty, "\(directory.files)")

        _ = try Self.resume(
            client, id, from: offset, data, filename: "cut.bin", title: "cut", label: "client cut")
        let seconds = Date().timeIntervalSince(started)
        Self.checkLog(proxy, id: id, label: "client cut")
        // Each tus request has its line: the creation, the cut PATCH, the HEADs, the resume.
        let patches = proxy.accessLog.filter { $0["method"] as? String == "PATCH" }
        #expect(patches.count == 2, "\(patches)")
        #expect(
            patches.allSatisfy { tusObject($0)?["id"] as? String == id },
            "every PATCH line names the upload: \(patches)")
        #expect(directory.strayFiles.isEmpty, "\(directory.files)")

        let peak = proxy.peakRSSKiB
        #expect(peak > 0 && peak < Self.rssBoundKiB, "FormGate's peak RSS \(peak) KiB for a 256 MiB upload")
        Self.addFigures([
            "client_cut_at": sent, "client_cut_head_offset": offset, "client_cut_peak_rss_kib": peak,
            "client_cut_seconds": (seconds * 10).rounded() / 10,
        ])
    }

    /// The client resets its connection (RST) mid-PATCH: the bytes FormGate read before the
    /// reset are kept (the kernel drops the rest, so HEAD's offset is at most what was sent),
    /// FormGate keeps serving, and a PATCH from HEAD's offset completes the upload byte for
    /// byte. A 16 MiB upload: the reset, not the size, is the point.
    @Test func aPatchResetByTheClientKeepsWhatWasReadAndFormGateServesOn() throws {
        let seed: UInt64 = 0x7475_735F_7273_7401
        let size: Int64 = 16 << 20
        let data = try SeededFile(size: size, seed: seed)
        let directory = try TusStoreDirectory()
        let upstream = try startDemoUpstream()
        defer { upstream.stop() }
        let proxy = try startProxy(tusConfig(upstream: upstream.url, store: directory.store), workers: 2)
        defer { proxy.stop() }
        let client = TusClient(port: proxy.port)
        let id = try client.createID(length: size, metadata: [("filename", "reset.bin"), ("title", "reset")])

        let sent: Int64
        do {
            let cut = try client.openPatch(id, offset: 0, contentLength: size)
            sent = data.stream(to: cut, from: 0, count: 12 << 20)
            var reset = linger(l_onoff: 1, l_linger: 0)
            setsockopt(cut.fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
            // `cut` closes here: with a zero linger, a reset.
        }
        try #require(sent == 12 << 20)
        // The PATCH's line (499) shows the exchange ended; its bytes are committed after it.
        #expect(
            eventually(within: 30) { proxy.accessLog.contains { $0["method"] as? String == "PATCH" } },
            "the reset PATCH was never logged")
        // Like every tus request's line, it names the upload.
        let patchLine = proxy.accessLog.first { $0["method"] as? String == "PATCH" }
        #expect(
            patchLine.flatMap(tusObject)?["id"] as? String == id,
            "the reset PATCH's line: \(patchLine ?? [:])")
        let offset = Self.headOffset(client, id) { $0 > 0 }
        #expect(
            offset > 0 && offset <= sent, "HEAD after the reset: \(offset) of \(sent) sent (seed \(seed))")
        let options = try? client.send("OPTIONS", "/files", timeout: 5)
        #expect(options?.status == 204, "FormGate no longer answers after the reset")
        try #require(offset >= 0 && offset <= sent, "HEAD: \(offset); FormGate: \(proxy.stderr.suffix(500))")
        #expect(
            directory.binSize(id) == offset, "the .bin holds \(directory.binSize(id)) bytes, HEAD \(offset)")
        #expect(
            sha256OfFile("\(directory.store)/\(id).bin", prefix: offset) == data.sha256(prefix: offset),
            "the stored bytes differ from the file's first \(offset) (seed \(seed))")

        let patch = try client.openPatch(id, offset: offset, contentLength: size - offset)
        data.stream(to: patch, from: offset, count: size - offset)
        let answer = try TusClient.response(patch, "the resuming PATCH", timeout: 60)
        #expect(answer.status == 200, "\(answer)")
        let receipt = try? jsonObject(Data(answer.body))
        let file = (receipt?["files"] as? [[String: Any]])?.first
        #expect(
            file?["sha256"] as? String == data.sha256 && (file?["size"] as? NSNumber)?.int64Value == size,
            "the delivered file differs from the upload (seed \(seed)): \(answer)")
    }

    /// FormGate is killed (SIGKILL) while a PATCH's bytes arrive, after two PATCHes were
    /// acknowledged; a FormGate started on the same store reports an offset at least the last
    /// acknowledged one and at most what was sent, its stored bytes are the file's, and a PATCH
    /// from there completes the upload byte for byte.
    @Test func aKilledFormGateResumesFromItsStore() throws {
        let seed: UInt64 = 0x7475_735F_6B69_6C6C
        let data = try SeededFile(size: Self.size, seed: seed)
        let directory = try TusStoreDirectory()
        let upstream = try startDemoUpstream()
        defer { upstream.stop() }
        let config = tusConfig(upstream: upstream.url, store: directory.store)
        let first = try startProxy(config, workers: 2)
        defer { first.stop() }
        let id = try TusClient(port: first.port).createID(
            length: Self.size, metadata: [("filename", "killed.bin"), ("title", "kill -9")])
        let started = Date()

        let chunk: Int64 = 48 << 20
        var acknowledged: [Int64] = []
        for start in [0, chunk] {
            let patch = try TusClient(port: first.port).openPatch(id, offset: start, contentLength: chunk)
            #expect(data.stream(to: patch, from: start, count: chunk) == chunk)
            let answer = try TusClient.response(patch, "PATCH at \(start)", timeout: 120)
            try #require(answer.status == 204 && answer.offset == start + chunk, "\(answer)")
            acknowledged.append(start + chunk)
        }
        let sentBeforeKill: Int64
        var peakBeforeKill = 0
        do {
            let inFlight = try TusClient(port: first.port).openPatch(
                id, offset: 2 * chunk, contentLength: Self.size - 2 * chunk)
            sentBeforeKill = data.stream(to: inFlight, from: 2 * chunk, count: 40 << 20)
            peakBeforeKill = first.peakRSSKiB
            #expect(kill(first.pid, SIGKILL) == 0)
            first.process.waitUntilExit()
        }
        #expect(
            first.process.terminationReason == .uncaughtSignal && first.process.terminationStatus == SIGKILL)
        first.stop()
        try #require(sentBeforeKill == 40 << 20, "the in-flight PATCH's bytes were not all taken")
        #expect(directory.strayFiles.isEmpty, "after kill -9: \(directory.files)")

        let second = try startProxy(config, workers: 2)
        defer { second.stop() }
        let client = TusClient(port: second.port)
        let head = try client.headOf(id)
        try #require(head.status == 200, "HEAD after the restart: \(head)")
        let offset = try #require(head.offset, "\(head)")
        #expect(head.header("Upload-Length") == String(Self.size))
        #expect(
            offset >= acknowledged.max()!,
            "acknowledged bytes lost: HEAD \(offset) after 204s up to \(acknowledged.max()!) (seed \(seed))")
        #expect(offset <= 2 * chunk + sentBeforeKill, "HEAD \(offset) counts bytes never sent")
        let binAtRestart = directory.binSize(id)
        #expect(binAtRestart >= offset, "the .bin holds \(binAtRestart) bytes, HEAD \(offset)")
        // The test's own check: the kill came while the third PATCH's bytes were being written.
        #expect(
            binAtRestart > acknowledged.max()!, "the kill was not mid-PATCH: the .bin holds \(binAtRestart)")
        #expect(
            sha256OfFile("\(directory.store)/\(id).bin", prefix: offset) == data.sha256(prefix: offset),
            "the stored bytes differ from the file's first \(offset) (seed \(seed))")

        _ = try Self.resume(
            client, id, from: offset, data, filename: "killed.bin", title: "kill -9", label: "kill -9")
        let seconds = Date().timeIntervalSince(started)
        Self.checkLog(second, id: id, label: "kill -9")
        let heads = second.accessLog.filter { $0["method"] as? String == "HEAD" }
        #expect(
            heads.count == 1 && (heads.first.flatMap(tusObject)?["offset"] as? NSNumber)?.int64Value == offset
        )
        #expect(directory.strayFiles.isEmpty, "\(directory.files)")

        let peakAfterRestart = second.peakRSSKiB
        #expect(
            peakBeforeKill > 0 && peakBeforeKill < Self.rssBoundKiB,
            "FormGate's peak RSS \(peakBeforeKill) KiB before the kill")
        #expect(
            peakAfterRestart > 0 && peakAfterRestart < Self.rssBoundKiB,
            "FormGate's peak RSS \(peakAfterRestart) KiB after the restart (resume and delivery)")
        Self.addFigures([
            "kill_acknowledged_offset": acknowledged.max()!, "kill_sent_in_flight": sentBeforeKill,
            "kill_head_offset_after_restart": offset, "kill_bin_bytes_at_restart": binAtRestart,
            "kill_peak_rss_kib_before_kill": peakBeforeKill,
            "kill_peak_rss_kib_after_restart": peakAfterRestart,
            "kill_seconds": (seconds * 10).rounded() / 10,
        ])
    }
}
