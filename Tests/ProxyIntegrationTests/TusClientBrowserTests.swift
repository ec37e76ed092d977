import Foundation
import Testing

/// Headless Chromium runs a small tus client written with `fetch` in the page
/// (`Resources/tus_page.html`, served through FormGate from a static server): it generates a
/// file (xorshift32 bytes from a fixed seed) and uploads it in 1 MiB PATCHes to three tus
/// routes of one FormGate, delivering to PHP, Werkzeug and the Qiniu mock. Each upstream's
/// answer, relayed to the page, must hold the file byte-exact, renamed, with its fields, and
/// each upstream got one POST.
@Suite(.serialized) struct TusClientBrowserTests {
    static let seed: UInt32 = 0x7B5_0C0D
    static let size = (5 << 19) + 7
    static let chunk = 1 << 20

    /// The page's bytes: xorshift32 (13, 17, 5) from `seed`, the low byte of each state.
    static func pageBytes(_ count: Int, seed: UInt32) -> [UInt8] {
        var x = seed
        return (0..<count).map { _ in
            x ^= x << 13
            x ^= x >> 17
            x ^= x << 5
            return UInt8(truncatingIfNeeded: x)
        }
    }

    @Test func chromiumUploadsAGeneratedFileWithATusClientOnFetch() throws {
        let site = NSTemporaryDirectory() + "formgate-tus-site-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: site, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: site) }
        try FileManager.default.copyItem(
            atPath: UpstreamServerTests.resources.appendingPathComponent("tus_page.html").path,
            toPath: site + "/page.html")
        let staticPort = try freePort()
        let staticServer = try ServerProcess(
            try python3(),
            ["-m", "http.server", "--bind", "127.0.0.1", "--directory", site, String(staticPort)],
            waitForListening: false)
        defer { staticServer.stop() }
        #expect(eventually(within: 30) { (try? RawClient(port: staticPort)) != nil })

        let kinds = TusUpstreamKind.allCases
        var upstreams: [TusUpstream] = []
        defer { for upstream in upstreams { upstream.server.stop() } }
        for kind in kinds { upstreams.append(try TusUpstream.start(kind)) }
        let stores = kinds.map { _ in TusSetup.storePath() }
        defer { for store in stores { try? FileManager.default.removeItem(atPath: store) } }
        var yaml = "upstream: http://127.0.0.1:\(staticPort)\nroutes:\n"
        for (index, kind) in kinds.enumerated() {
            yaml += TusSetup.routeYAML(
                kind, upstreamURL: upstreams[index].url, store: stores[index], path: "/\(kind)/files",
                name: "tus-\(kind)")
        }
        let proxy = try startProxy(yaml, workers: 2)
        defer { proxy.stop() }

        let profile = site + "/chromium-profile"
        let routes = kinds.map { "/\($0)/files" }.joined(separator: ",")
        let text = try chromiumPageResult(
            "\(proxy.url)/page.html?size=\(Self.size)&seed=\(Self.seed)&chunk=\(Self.chunk)&routes=\(routes)",
            profile: profile, budgetMilliseconds: 60000)
        #expect(text.hasPrefix("DONE "), "\(text.prefix(500))")
        let json = text.dropFirst("DONE ".count)
        let results = try #require(
            try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]], "\(json.prefix(500))"
        )
        #expect(results.count == kinds.count)

        let bytes = Self.pageBytes(Self.size, seed: Self.seed)
        let offsets = [0, Self.chunk, 2 * Self.chunk]
        var expectedSteps = ["POST 201"]
        for (index, offset) in offsets.enumerated() {
            expectedSteps += [
                "HEAD 200 \(offset)",
                "PATCH \(index == 2 ? 200 : 204) \(min(offset + Self.chunk, Self.size))",
            ]
        }
        for (kind, upload) in zip(kinds, results) {
            #expect(upload["route"] as? String == "/\(kind)/files")
            #expect(upload["steps"] as? [String] == expectedSteps, "\(kind): \(upload)")
            let location = upload["location"] as? String ?? ""
            #expect(location.hasPrefix("\(proxy.url)/\(kind)/files/"), "an absolute Location: \(location)")
            let receipt = try TusReceipt(kind, Array((upload["body"] as? String ?? "").utf8))
            expectDelivered(
                receipt, kind, bytes: bytes, ext: ".webm", type: "video/webm", title: "from /\(kind)/files ☀",
                seed: UInt64(Self.seed))
        }
        for upstream in upstreams {
            #expect(upstream.sawOnePost(), "\(upstream.kind) counted \(upstream.postsSeen ?? -1) POSTs")
        }
        // 1 page load, and per route: POST, 3 HEAD, 3 PATCH, the delivery.
        let log = proxy.accessLog(atLeast: 1 + 8 * kinds.count)
        for kind in kinds {
            let deliveries = log.filter {
                $0["path"] as? String == "/upload" && $0["route"] as? String == "tus-\(kind)"
            }
            expectDeliveryLine(deliveries, original: "browser ☀.webm", size: Self.size)
        }
        withExtendedLifetime(staticServer) {}
    }
}
