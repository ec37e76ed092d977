import Foundation
import Testing

/// Issue 32's acceptance in a real browser: headless Chromium (Debian's, driven over the
/// DevTools protocol by `Resources/devtools.py`) opens the admin page while five uploads are in
/// flight (a slow one, one held by a scan verdict the test keeps back, a tus upload, an HTTP/2
/// stream, one its upstream holds): the page lists the five with their stages and moving byte
/// counts, then shows them finished with their statuses; its screenshots are not blank; it
/// makes no request outside the admin origin.
@Suite(.serialized) struct LiveBrowserTests {
    static let rows = "[...document.querySelectorAll('tr.upload')]"
    static let describeRows =
        "\(rows).map(r => ({id: r.dataset.id, stage: r.dataset.stage, bytes: +r.dataset.bytes, text: r.innerText}))"

    @Test func thePageFollowsFiveUploadsToTheirEnd() throws {
        let rig = try LiveRig()
        defer { rig.stop() }
        try rig.start()
        let inFlight = try LiveViewTests.awaitInFlight(rig)
        let expected: [String: String] = [
            "slow": "receiving", "scanned": "held:scan", "gated": "waiting_upstream",
            "resumable": "receiving",
            "h2": "receiving",
        ]
        let ids = expected.keys.reduce(into: [String: String]()) { ids, key in
            ids[inFlight[key]?["id"] as? String ?? "-"] = key
        }
        let signal = rig.directory + "/page-checked"
        let releaser = Thread {
            _ = eventually(within: 120) { FileManager.default.fileExists(atPath: signal) }
            rig.release()
        }
        releaser.start()
        let origin = "http://127.0.0.1:\(rig.adminPort)"
        let stages = "\(Self.rows).map(r => r.dataset.stage)"
        let result = try DevToolsScript(
            url: "\(origin)/?access_token=\(LiveRig.token)",
            steps: [
                .wait(
                    "(s => s.length === 5 && s.includes('held:scan') && s.includes('waiting_upstream'))(\(stages))",
                    timeoutMilliseconds: 30000),
                .eval(
                    "window.firstBytes = Object.fromEntries(\(Self.rows).map(r => [r.dataset.id, +r.dataset.bytes])); \(Self.describeRows)"
                ),
                .wait(
                    "\(Self.rows).filter(r => +r.dataset.bytes > (window.firstBytes[r.dataset.id] ?? Infinity)).length >= 3",
                    timeoutMilliseconds: 30000),
                .eval(Self.describeRows),
                .screenshot(path: rig.directory + "/in-flight.png", selector: "#in-flight"),
                .signal(path: signal),
                .wait(
                    "document.querySelectorAll('tr.upload').length === 0 && document.querySelectorAll('tr.finished').length >= 6",
                    timeoutMilliseconds: 60000),
                .eval(
                    "[...document.querySelectorAll('tr.finished')].map(r => ({id: r.dataset.id, status: r.dataset.status, text: r.innerText}))"
                ),
                .screenshot(path: rig.directory + "/page.png"),
            ]
        ).run()
        #expect(result.ok, "\(result.error ?? "") console: \(result.console)")
        try #require(result.evals.count == 3)

        // The five, each at its stage, as the JSON view has them.
        let first = result.evals[0] as? [[String: Any]] ?? []
        var seen: [String: String] = [:]
        for row in first {
            let key = ids[row["id"] as? String ?? ""] ?? "unknown"
            seen[key] = row["stage"] as? String
        }
        #expect(seen == expected, "rows: \(first)")
        let h2Row = first.first { ids[$0["id"] as? String ?? ""] == "h2" }?["text"] as? String ?? ""
        #expect(h2Row.contains("h2"), "\(h2Row)")
        let tusRow = first.first { ids[$0["id"] as? String ?? ""] == "resumable" }?["text"] as? String ?? ""
        #expect(
            tusRow.contains("1.0 MiB") || tusRow.contains("1 MiB"), "the tus row shows its length: \(tusRow)")

        // Their byte counts moved on the page.
        let later = result.evals[1] as? [[String: Any]] ?? []
        let before = Dictionary(
            uniqueKeysWithValues: first.map { ($0["id"] as? String ?? "", $0["bytes"] as? Int ?? 0) })
        let grew = later.filter {
            ($0["bytes"] as? Int ?? 0) > (before[$0["id"] as? String ?? ""] ?? Int.max)
        }
        #expect(grew.count >= 3, "bytes: \(first) then \(later)")

        // Then finished, each with its status (the tus creation shows too).
        let finished = result.evals[2] as? [[String: Any]] ?? []
        var statuses: [String: String] = [:]
        for row in finished {
            if let key = ids[row["id"] as? String ?? ""] { statuses[key] = row["status"] as? String }
        }
        #expect(
            statuses == ["slow": "200", "scanned": "200", "gated": "201", "resumable": "200", "h2": "200"],
            "finished: \(finished)")

        // Not blank: the table region has many colours; nothing left the admin origin.
        #expect(result.screenshots.count == 2)
        #expect(result.screenshots.allSatisfy { $0.colours > 16 && $0.width > 0 }, "\(result.screenshots)")
        #expect(!result.requests.isEmpty)
        for url in result.requests {
            #expect(url.hasPrefix(origin + "/"), "a request outside the admin origin: \(url)")
        }
        #expect(result.requests.filter { $0.contains(LiveRig.token) }.count == 1, "\(result.requests)")
    }
}
