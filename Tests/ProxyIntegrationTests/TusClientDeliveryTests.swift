import Foundation
import Testing

/// How a finished tus upload is delivered, seen from the upstream: four partial uploads sent in
/// parallel and concatenated arrive as one file, and an upload over HTTP/2 (h2c with prior
/// knowledge) arrives as over HTTP/1.1. Retried completions are TusClientRetryTests.
@Suite(.serialized) struct TusClientDeliveryTests {
    /// Results that threads add to.
    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var entries: [Int: [String]] = [:]
        private var paths: [Int: String] = [:]

        func add(_ index: Int, _ entry: String) {
            lock.withLock { entries[index, default: []].append(entry) }
        }
        func set(_ index: Int, path: String) { lock.withLock { paths[index] = path } }
        var all: [Int: [String]] { lock.withLock { entries } }
        var locations: [Int: String] { lock.withLock { paths } }
    }

    /// Four partial uploads (`Upload-Concat: partial`, uneven sizes, one sent whole with its
    /// creation, the others in two PATCHes), created and sent from four threads at once; then
    /// the final upload naming them in order: 201 with the upstream's answer, which holds the
    /// four concatenated byte-exact, and the upstream saw that one POST only (a partial upload
    /// is never delivered on its own).
    @Test(arguments: TusUpstreamKind.allCases)
    func fourParallelPartialUploadsDeliverOneFile(_ kind: TusUpstreamKind) throws {
        let upstream = try TusUpstream.start(kind)
        defer { upstream.server.stop() }
        let setup = try TusSetup(kind, upstreamURL: upstream.url)
        defer { setup.stop() }
        let port = setup.port
        let seed: UInt64 = 0x7_5C0C
        let whole = SeededRandom.bytes(600_001 + 1_048_576 + 3 + 1_500_000, seed: seed)
        let bounds = [0, 600_001, 1_648_577, 1_648_580, whole.count]
        let parts = (0..<4).map { Array(whole[bounds[$0]..<bounds[$0 + 1]]) }
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 4) { index in
            let part = parts[index]
            do {
                if part.count < 10 {
                    // Creation with upload: all its bytes with the POST.
                    let created = try TusHTTP.send(
                        port: port, "POST", "/files",
                        [
                            ("Upload-Length", String(part.count)), ("Upload-Concat", "partial"),
                            ("Content-Type", "application/offset+octet-stream"),
                        ], body: part)
                    results.add(index, "POST \(created.status) \(created.header("Upload-Offset") ?? "-")")
                    results.set(index, path: created.locationPath ?? "")
                    return
                }
                let path = try TusHTTP.create(
                    port: port, length: part.count, metadata: "", extra: [("Upload-Concat", "partial")])
                results.set(index, path: path)
                let half = part.count / 2
                for (offset, piece) in [(0, Array(part[..<half])), (half, Array(part[half...]))] {
                    let patched = try TusHTTP.patch(port: port, path, offset: offset, piece)
                    results.add(index, "PATCH \(patched.status) \(patched.header("Upload-Offset") ?? "-")")
                }
            } catch {
                results.add(index, "error \(error)")
            }
        }
        for index in 0..<4 {
            let count = parts[index].count
            let expected =
                count < 10 ? ["POST 201 \(count)"] : ["PATCH 204 \(count / 2)", "PATCH 204 \(count)"]
            #expect(results.all[index] == expected, "partial \(index): 204s, nothing delivered yet")
        }
        let paths = (0..<4).map { results.locations[$0] ?? "" }
        for path in paths {
            let head = try TusHTTP.send(port: port, "HEAD", path)
            #expect(head.status == 200 && head.header("Upload-Concat") == "partial", "\(head)")
            #expect(head.header("Upload-Offset") == head.header("Upload-Length"))
        }
        #expect(setup.deliveries(atLeast: 13).isEmpty, "no partial upload went upstream")

        let urls = paths.map { "http://127.0.0.1:\(port)\($0)" }
        let title = "four parts"
        let final = try TusHTTP.send(
            port: port, "POST", "/files",
            [
                ("Upload-Concat", "final;" + urls.joined(separator: " ")),
                (
                    "Upload-Metadata",
                    tusMetadata([
                        ("filename", "joined.tar"), ("filetype", "application/x-tar"), ("title", title),
                    ])
                ),
            ])
        #expect(final.status == 201, "\(final)")
        let finalPath = try #require(final.locationPath)
        expectDelivered(
            try TusReceipt(kind, final.body), kind, bytes: whole, ext: ".tar", type: "application/x-tar",
            title: title, seed: seed)
        #expect(upstream.sawOnePost(), "the upstream counted \(upstream.postsSeen ?? -1) POSTs")
        let head = try TusHTTP.send(port: port, "HEAD", finalPath)
        #expect(head.header("Upload-Concat") == "final;" + urls.joined(separator: " "), "\(head)")
        #expect(head.header("Upload-Offset") == String(whole.count))
        #expect(head.header("Upload-Length") == String(whole.count))
        // The same final creation again (a client that lost its answer): the same upload and
        // answer, and still one POST upstream.
        let again = try TusHTTP.send(
            port: port, "POST", "/files",
            [
                ("Upload-Concat", "final;" + urls.joined(separator: " ")),
                (
                    "Upload-Metadata",
                    tusMetadata([
                        ("filename", "joined.tar"), ("filetype", "application/x-tar"), ("title", title),
                    ])
                ),
            ])
        #expect(again.status == 201 && again.locationPath == finalPath, "\(again)")
        #expect(again.body == final.body, "the retried final creation replays the answer")
        #expect(upstream.sawOnePost(), "the upstream counted \(upstream.postsSeen ?? -1) POSTs")
        expectDeliveryLine(setup.deliveries(atLeast: 17), original: "joined.tar", size: whole.count)
    }

    /// curl over h2c (prior knowledge): creation with the first piece, HEAD, two PATCHes, the
    /// last answered with the upstream's answer (byte-exact, one POST), a retried final PATCH
    /// with the same answer; every tus line logged as h2.
    @Test(arguments: [TusUpstreamKind.php, .werkzeug])
    func anUploadOverHTTP2(_ kind: TusUpstreamKind) throws {
        let upstream = try TusUpstream.start(kind)
        defer { upstream.server.stop() }
        let setup = try TusSetup(
            kind, upstreamURL: upstream.url, listeners: ["{ address: 127.0.0.1:0, http2: { h2c: true } }"])
        defer { setup.stop() }
        let seed: UInt64 = 0x7_5202
        let bytes = SeededRandom.bytes(3_000_000, seed: seed)
        let directory = NSTemporaryDirectory() + "formgate-tus-h2-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let bounds = [0, 500_000, 2_000_000, bytes.count]
        for index in 0..<3 {
            try Data(bytes[bounds[index]..<bounds[index + 1]]).write(
                to: URL(fileURLWithPath: "\(directory)/piece\(index)"))
        }
        let h2 = ["--http2-prior-knowledge", "-H", "Tus-Resumable: 1.0.0"]
        let octets = ["-H", "Content-Type: application/offset+octet-stream"]
        let title = "over h2"
        let metadata = tusMetadata([
            ("filename", "h2.bin"), ("filetype", "application/octet-stream"), ("title", title),
        ])
        let created = try curlTus(
            ["-X", "POST"] + h2 + octets + [
                "-H", "Upload-Length: \(bytes.count)", "-H", "Upload-Metadata: \(metadata)",
                "--data-binary", "@\(directory)/piece0", setup.creationURL,
            ])
        #expect(created.status == 201 && created.header("Upload-Offset") == "500000", "\(created)")
        let location = try #require(created.header("Location"))
        #expect(
            location.hasPrefix("\(setup.creationURL)/"), "an absolute Location from :authority: \(location)")
        let head = try curlTus(["-I"] + h2 + [location])
        #expect(head.status == 200 && head.header("Upload-Offset") == "500000", "\(head)")
        let middle = try curlTus(
            ["-X", "PATCH"] + h2 + octets + [
                "-H", "Upload-Offset: 500000", "--data-binary", "@\(directory)/piece1", location,
            ])
        #expect(middle.status == 204 && middle.header("Upload-Offset") == "2000000", "\(middle)")
        let last = try curlTus(
            ["-X", "PATCH"] + h2 + octets + [
                "-H", "Upload-Offset: 2000000", "--data-binary", "@\(directory)/piece2", location,
            ])
        #expect(last.status == 200 && last.header("Upload-Offset") == String(bytes.count), "\(last)")
        expectDelivered(
            try TusReceipt(kind, last.body), kind, bytes: bytes, ext: ".bin",
            type: "application/octet-stream",
            title: title, seed: seed)
        let retried = try curlTus(
            ["-X", "PATCH"] + h2 + octets + [
                "-H", "Upload-Offset: \(bytes.count)", "--data-binary", "", location,
            ])
        #expect(retried.status == 200 && retried.body == last.body, "the stored answer: \(retried)")
        #expect(upstream.sawOnePost(), "the upstream counted \(upstream.postsSeen ?? -1) POSTs")
        let log = setup.proxy.accessLog(atLeast: 6)
        let tusLines = log.filter { $0["tus"] is [String: Any] }
        #expect(tusLines.count == 5, "\(tusLines)")
        #expect(tusLines.allSatisfy { $0["protocol"] as? String == "h2" }, "\(tusLines)")
        expectDeliveryLine(setup.deliveries(atLeast: 6), original: "h2.bin", size: bytes.count)
    }
}
