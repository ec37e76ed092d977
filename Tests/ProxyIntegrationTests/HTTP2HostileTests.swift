import Foundation
import Testing

/// The hostile HTTP/2 cases (`Resources/h2_hostile.py`, written with the h2 library) against a
/// proxy whose upstream is a raw recorder, each held to its pinned expectation
/// (`Resources/h2_hostile_expected.json`): the verdict and the outcome the client saw; what
/// the upstream received (nothing, aborted partial requests, or exactly the re-framed requests
/// the case names); for floods, the frames (or streams) the server took before its GOAWAY and
/// the proxy's CPU time; for oversized and amplified header blocks, its peak memory. Then the
/// proxy's descriptors return to where they were. Over h2c with prior knowledge (and, for the
/// h2c Upgrade cases, HTTP/1.1 on the h2c listener and on one without HTTP/2).
@Suite(.serialized) struct HTTP2HostileTests {
    /// The route the cases use: multipart rules that inject a field first.
    static let configuration = """
        admin: 127.0.0.1:0
        timeouts: { idle: 3s, header: 3s }
        routes:
          - match: { path: /upload }
            multipart:
              inject: [{ name: via, value: h2 }]

        """

    /// The recorder's answer to every whole request (the controls need one).
    static let answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

    @Test func everyCaseMeetsItsPinnedVerdictAndTheUpstreamGetsOnlyWhatItMay() throws {
        let setup = try HTTP2RecorderSetup(
            Self.configuration, upstream: .answer(Self.answer), listeners: ["127.0.0.1:0"])
        defer { setup.stop() }
        // One request first: what a process opens once (the random source) is not a leak.
        let warmUp = try run(
            try tool("curl"),
            [
                "-sS", "--http2-prior-knowledge", "-F", "title=two", "-F", "file=@/dev/null",
                "http://127.0.0.1:\(setup.port(.h2c))/upload?case=warm-up",
            ])
        #expect(String(decoding: warmUp.output, as: UTF8.self) == "ok")
        let (results, summary) = try Self.runCases(setup)
        let pinned = try HostileExpectation.load()
        #expect(results.keys.sorted() == pinned.keys.sorted(), "the cases run are not the cases pinned")
        for (name, expectation) in pinned.sorted(by: { $0.key < $1.key }) {
            guard let result = results[name] else { continue }
            Self.checkAnswer(name, result, expectation)
        }
        let before = try #require(summary["fds_before"] as? Int)
        #expect(
            eventually { Self.descriptors(setup.proxy.pid) <= before },
            "descriptors back to \(before): \(Self.descriptorList(setup.proxy.pid))")
        #expect(
            (summary["rss_kib_after"] as? Int ?? .max) - (summary["rss_kib_before"] as? Int ?? 0) < 16 * 1024)
        Self.checkUpstream(setup, results, pinned)
        Self.checkLog(setup, pinned)
    }

    /// The access-log statuses of the cases that pin them: a stream a connection error ended
    /// is logged as the client's leaving (499) when the GOAWAY goes, not as a 408 once
    /// `timeouts.idle` has passed.
    static func checkLog(_ setup: HTTP2RecorderSetup, _ pinned: [String: HostileExpectation]) {
        for (name, expectation) in pinned.sorted(by: { $0.key < $1.key }) where !expectation.logged.isEmpty {
            // Each stream's line is written when its exchange ends; the wait ends at the first.
            // (A stream ended before its upstream connection was ready has no request id
            // upstream to find its line by.)
            guard UpstreamRecord.all(setup.recorder).contains(where: { $0.caseName == name }) else {
                continue
            }
            var statuses: [Int] = []
            _ = eventually {
                let ids = Set(
                    UpstreamRecord.all(setup.recorder).filter { $0.caseName == name }.compactMap(\.requestID))
                statuses = setup.proxy.accessLog.filter { ($0["id"] as? String).map(ids.contains) == true }
                    .compactMap { $0["status"] as? Int }
                return !statuses.isEmpty
            }
            #expect(
                !statuses.isEmpty && statuses.allSatisfy(expectation.logged.contains),
                "\(name): logged \(statuses), pinned \(expectation.logged)")
        }
    }

    /// Runs every case once (the script's own waits are events; its deadlines only end a case
    /// the proxy leaves hanging): each case's JSON line by name, and the summary line.
    static func runCases(_ setup: HTTP2RecorderSetup) throws -> (
        results: [String: [String: Any]], summary: [String: Any]
    ) {
        let script = UpstreamServerTests.resources.appendingPathComponent("h2_hostile.py").path
        // The listener without HTTP/2 is the last plain one (after the h2c listener).
        let http1 = setup.proxy.listeners.filter { !$0.tls }.last?.port ?? 0
        let output = try run(
            try python3(),
            [
                script, "127.0.0.1", String(setup.port(.h2c)), "--path", "/upload", "--tag", "--http1-port",
                String(http1), "--json", "--deadline", "10", "--slow-deadline", "60", "--pid",
                String(setup.proxy.pid),
            ]
        ).output
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap {
            try? jsonObject(Data($0.utf8))
        }
        var results: [String: [String: Any]] = [:]
        for line in lines {
            if let name = line["case"] as? String { results[name] = line }
        }
        let summary = try #require(
            lines.first { $0["summary"] as? Bool == true }, "no summary: \(lines.count) lines")
        return (results, summary)
    }

    /// The client's side of one case: its verdict and outcome as pinned, and its bounds.
    static func checkAnswer(_ name: String, _ result: [String: Any], _ expectation: HostileExpectation) {
        let verdict = result["verdict"] as? String ?? "?"
        let outcome = result["outcome"] as? String ?? "?"
        #expect(
            verdict == expectation.verdict && expectation.outcomes.contains(outcome),
            """
            \(name): \(verdict), \(outcome) (\(result["note"] ?? "")); pinned \(expectation.verdict), \
            \(expectation.outcomes.joined(separator: " or "))
            """)
        if let most = expectation.maxAccepted {
            let flood = result["flood"] as? [String: Any] ?? [:]
            let accepted = flood["accepted"] as? Int ?? .max
            let count = flood["count"] as? Int ?? 0
            let unit = flood["unit"] as? String ?? "frame"
            #expect(
                accepted <= most,
                "\(name): \(accepted) of \(count) \(unit)s taken before the GOAWAY, more than \(most)"
            )
        }
        if let most = expectation.maxCPUSeconds {
            let seconds = (result["cpu_seconds"] as? NSNumber)?.doubleValue ?? .infinity
            #expect(seconds <= most, "\(name): the proxy spent \(seconds) CPU s, more than \(most)")
        }
        if let most = expectation.maxPeakGrowthKiB {
            let growth = result["peak_rss_growth_kib"] as? Int ?? .max
            #expect(growth <= most, "\(name): the proxy's peak RSS grew by \(growth) KiB, more than \(most)")
        }
    }

    static func descriptorList(_ pid: Int32) -> [String] {
        let directory = "/proc/\(pid)/fd"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.map {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + $0)) ?? $0
        }
    }

    static func descriptors(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? .max
    }
}

/// One case's pinned expectation (an entry of `Resources/h2_hostile_expected.json`).
struct HostileExpectation {
    var verdict: String
    /// The outcomes allowed: one, or two when the reads decide between them.
    var outcomes: [String]
    /// The methods of the requests the upstream must receive whole, re-framed.
    var whole: [String]
    /// The methods of requests it may receive whole, or not (a connection error may end them
    /// before they were all sent).
    var maybe: [String]
    /// Whether aborted partial requests are allowed upstream.
    var partial: Bool
    /// At most this many more whole GETs, of streams the client reset once sent.
    var cancelled: Int
    var maxAccepted: Int?
    var maxCPUSeconds: Double?
    var maxPeakGrowthKiB: Int?
    /// The access-log statuses allowed for the case's streams (none pinned: any).
    var logged: [Int]

    init(_ entry: [String: Any]) {
        verdict = entry["verdict"] as? String ?? "?"
        outcomes = entry["outcome"] as? [String] ?? [entry["outcome"] as? String ?? "?"]
        let upstream = entry["upstream"] as? [String: Any] ?? [:]
        whole = upstream["whole"] as? [String] ?? []
        maybe = upstream["maybe"] as? [String] ?? []
        partial = upstream["partial"] as? Bool ?? false
        cancelled = upstream["cancelled"] as? Int ?? 0
        let bounds = entry["bounds"] as? [String: Any] ?? [:]
        maxAccepted = bounds["accepted"] as? Int
        maxCPUSeconds = (bounds["cpu_seconds"] as? NSNumber)?.doubleValue
        maxPeakGrowthKiB = bounds["peak_rss_growth_kib"] as? Int
        logged = entry["logged"] as? [Int] ?? []
    }

    /// Every case's expectation, by name.
    static func load() throws -> [String: HostileExpectation] {
        let url = UpstreamServerTests.resources.appendingPathComponent("h2_hostile_expected.json")
        let cases = try jsonObject(try Data(contentsOf: url))["cases"] as? [String: [String: Any]] ?? [:]
        return cases.mapValues(HostileExpectation.init)
    }
}
