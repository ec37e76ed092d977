import Foundation
import Testing

/// The admin live-upload page (`Sources/Proxy/AdminPage.swift`) in headless Chromium, driven
/// over the DevTools protocol (`Resources/devtools.py`), against `Resources/admin_page_fake.py`:
/// the page under the admin's Content-Security-Policy, and a scripted event stream cut into
/// pieces of 1 to 21 bytes (LF, CRLF and CR line ends, multi-line data, comments), which ends
/// and is reconnected to. A recorder installed before the page's script notes every state of
/// every row and of the stream, so a change the polling missed is still seen.
@Suite(.serialized) struct AdminPageTests {
    static let hostileFilename = "<img src=x onerror=alert(1)>"
    static let hostileIdentity = "<script>window.formgatePwned = 1</script>"
    static let mebibyte = 1 << 20

    /// Notes `stream STATE`, `ID STAGE BYTES` and `ID finished STATUS` in `window.seen` each time
    /// one changes.
    static let recorder = """
        (() => {
          window.seen = [];
          const last = new Map();
          const note = (key, value) => {
            if (last.get(key) !== value) { last.set(key, value); window.seen.push(key + ' ' + value); }
          };
          new MutationObserver(() => {
            if (document.body) note('stream', document.body.dataset.stream || '');
            for (const row of document.querySelectorAll('tr.upload')) {
              note(row.dataset.id, row.dataset.stage + ' ' + row.dataset.bytes);
            }
            for (const row of document.querySelectorAll('tr.finished')) {
              note(row.dataset.id, 'finished ' + row.dataset.status);
            }
          }).observe(document, {subtree: true, childList: true, attributes: true});
        })()
        """

    /// What the page shows, as one JSON string (decoded into `PageState`).
    static let state = """
        JSON.stringify({
          stream: document.body.dataset.stream, updates: window.formgateUpdates,
          status: document.getElementById('state').textContent,
          inFlight: [...document.querySelectorAll('#in-flight tr.upload')].map(
            (row) => [row.dataset.id, row.dataset.stage, row.dataset.bytes]),
          finished: [...document.querySelectorAll('#finished tr.finished')].map(
            (row) => [row.dataset.id, row.dataset.status]),
          texts: Object.fromEntries([...document.querySelectorAll('tr.upload, tr.finished')].map(
            (row) => [row.dataset.id, row.textContent])),
          progress: Object.fromEntries([...document.querySelectorAll('tr.upload')].map((row) => {
            const bar = row.querySelector('progress');
            return [row.dataset.id, [bar.hasAttribute('value') ? bar.value : -1, bar.max]];
          })),
          href: location.href, search: location.search,
          stored: sessionStorage.getItem('formgate-admin-token'),
          images: document.querySelectorAll('img').length, scripts: document.scripts.length,
          pwned: 'formgatePwned' in window, seen: window.seen})
        """

    struct PageState: Decodable {
        var stream: String
        var updates: Int
        var status: String
        var inFlight: [[String]]
        var finished: [[String]]
        var texts: [String: String]
        /// Per in-flight row: the bar's value (-1: indeterminate) and max.
        var progress: [String: [Double]]
        var href: String
        var search: String
        var stored: String?
        var images: Int
        var scripts: Int
        var pwned: Bool
        var seen: [String]

        /// The recorded values of `key` (a row id or `stream`), in order.
        func history(_ key: String) -> [String] {
            seen.filter { $0.hasPrefix(key + " ") }.map { String($0.dropFirst(key.count + 1)) }
        }
    }

    func startFake(token: String?, eventsToken: String? = nil) throws -> ServerProcess {
        var arguments = [
            UpstreamServerTests.resources.appendingPathComponent("admin_page_fake.py").path, "--page",
            packageRoot.appendingPathComponent("Sources/Proxy/AdminPage.swift").path,
        ]
        if let token { arguments += ["--token", token] }
        if let eventsToken { arguments += ["--events-token", eventsToken] }
        return try ServerProcess(try python3(), arguments)
    }

    func states(_ result: DevToolsResult) throws -> [PageState] {
        try result.evals.map { value in
            let text = try #require(value as? String, "\(value)")
            return try JSONDecoder().decode(PageState.self, from: Data(text.utf8))
        }
    }

    /// No CSP refusal, exception or error in the console, but for lines holding `expected`.
    func expectNoRefusals(_ result: DevToolsResult, except expected: String? = nil) {
        let bad = result.console.filter {
            ($0.contains("Refused") || $0.contains("Content Security Policy") || $0.hasPrefix("exception")
                || $0.hasPrefix("error")) && !(expected.map($0.contains) ?? false)
        }
        #expect(bad.isEmpty, "\(result.console)")
    }

    @Test func theTablesFollowTheStreamAndShowHostileNamesAsText() throws {
        let fake = try startFake(token: "secret")
        defer { fake.stop() }
        let directory = NSTemporaryDirectory() + "formgate-admin-page-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        let result = try DevToolsScript(
            url: "\(fake.url)/?access_token=secret",
            steps: [
                .wait("document.querySelector('tr.upload[data-id=a1]')"), .eval(Self.state),
                .wait("document.querySelector('tr.finished[data-id=c1]')"), .eval(Self.state),
                .wait("document.querySelector('tr.upload[data-id=w1]')"), .eval(Self.state),
                .screenshot(path: directory + "/in-flight.png", selector: "#in-flight"),
                .screenshot(path: directory + "/page.png"),
            ], initScript: Self.recorder
        ).run()
        #expect(result.ok, "\(result.error ?? "")")
        let states = try states(result)
        try #require(states.count == 3)
        let (first, ended, reconnected) = (states[0], states[1], states[2])

        // Hostile strings are text: no element made of them, no script run.
        let a1 = first.texts["a1"] ?? ""
        #expect(a1.contains(Self.hostileFilename) && a1.contains(Self.hostileIdentity), "\(a1)")
        #expect(first.images == 0 && first.scripts == 1 && !first.pwned)
        // The token left the address bar at once and stays in the session's storage only.
        #expect(first.search == "" && first.href == "\(fake.url)/" && first.stored == "secret")

        // a1 grew and changed stage, c1 was held, then both moved to the finished table.
        let a1Steps = ended.history("a1").map { $0.split(separator: " ").map(String.init) }
        let a1Bytes = a1Steps.filter { $0[0] != "finished" }.compactMap { Int($0[1]) }
        #expect(a1Bytes.first == 65536 && a1Bytes.last == 10 * Self.mebibyte, "\(ended.seen)")
        #expect(
            a1Bytes.count >= 3 && zip(a1Bytes, a1Bytes.dropFirst()).allSatisfy { $0 < $1 }, "\(ended.seen)")
        let a1Stages = a1Steps.map { $0[0] }.reduce(into: [String]()) { if $1 != $0.last { $0.append($1) } }
        #expect(
            a1Stages.first == "receiving" && a1Stages.suffix(2) == ["delivering", "finished"], "\(a1Stages)")
        #expect(Set(a1Stages).isSubset(of: ["receiving", "held:scan", "delivering", "finished"]))
        #expect(ended.history("c1").contains("held:auth 9000"), "\(ended.seen)")
        #expect(ended.history("c1").last == "finished 502")
        #expect(ended.inFlight == [["t1", "receiving", "\(3 * Self.mebibyte)"]])
        #expect(ended.finished == [["c1", "502"], ["a1", "201"], ["f0", "200"]])
        #expect(ended.texts["c1"]?.contains("upstream closed the connection") == true)

        // The stream ended: the page said so, reconnected, and took the new snapshot whole.
        let streams = reconnected.history("stream")
        #expect(
            streams.suffix(3) == ["open", "closed", "open"]
                || streams.suffix(4) == ["open", "closed", "connecting", "open"], "\(streams)")
        #expect(reconnected.stream == "open" && reconnected.status == "live")
        #expect(reconnected.inFlight.map { $0[0] } == ["t1", "w1"])
        #expect(reconnected.inFlight.last?[1] == "waiting_upstream")
        #expect(reconnected.progress["t1"] == [Double(4 * Self.mebibyte), Double(5 * Self.mebibyte)])
        #expect(reconnected.texts["t1"]?.contains("tus 4.0 MiB / 5.0 MiB") == true, "\(reconnected.texts)")
        #expect(reconnected.finished == [["c1", "502"], ["a1", "201"], ["f0", "200"]], "newest first")
        #expect(reconnected.updates == 10, "9 events, then a snapshot")

        // Every request went to the page's origin; only the first (the document) held the token.
        #expect(result.requests.allSatisfy { $0.hasPrefix("\(fake.url)/") }, "\(result.requests)")
        #expect(result.requests.first == "\(fake.url)/?access_token=secret")
        #expect(result.requests.dropFirst().allSatisfy { !$0.contains("access_token") })
        #expect(result.requests.filter { $0 == "\(fake.url)/uploads/events" }.count == 2)
        #expect(
            fake.stderr.components(separatedBy: "request /uploads/events auth=ok").count == 3,
            "\(fake.stderr)")
        // The page ran under the admin's policy (and nothing it did was refused).
        let document = try #require(result.responses.first)
        #expect(document.status == 200 && document.url == "\(fake.url)/?access_token=secret")
        #expect(document.headers["Content-Security-Policy"]?.hasPrefix("default-src 'none';") == true)
        expectNoRefusals(result)

        // The captures hold a drawn table, not a blank page.
        #expect(result.screenshots.count == 2)
        for shot in result.screenshots {
            #expect(FileManager.default.fileExists(atPath: shot.path))
            #expect(shot.width > 300 && shot.height > 40 && shot.colours > 16, "\(shot)")
        }
    }

    @Test func aRefusedTokenStopsAtUnauthorized() throws {
        let fake = try startFake(token: "secret", eventsToken: "rotated")
        defer { fake.stop() }
        let result = try DevToolsScript(
            url: "\(fake.url)/?access_token=secret",
            steps: [
                .wait("document.body.dataset.stream === 'unauthorized'"), .sleep(milliseconds: 3000),
                .eval(Self.state),
            ], initScript: Self.recorder
        ).run()
        #expect(result.ok, "\(result.error ?? "")")
        let state = try #require(try states(result).first)
        #expect(state.stream == "unauthorized")
        #expect(state.status == "unauthorized: open /?access_token=…")
        #expect(result.requests.filter { $0.hasSuffix("/uploads/events") }.count == 1, "no retry after a 401")
        #expect(fake.stderr.contains("request /uploads/events auth=wrong"), "the stored token was sent")
        expectNoRefusals(result, except: "the server responded with a status of 401")
    }

    @Test func aNarrowWindowStacksEachUploadWithoutScrollingThePage() throws {
        let fake = try startFake(token: nil)
        defer { fake.stop() }
        let result = try DevToolsScript(
            url: "\(fake.url)/",
            steps: [
                .wait("document.querySelector('tr.upload[data-id=c1]')"),
                .eval(
                    """
                    [document.documentElement.scrollWidth, innerWidth,
                     getComputedStyle(document.querySelector('tr.upload')).display,
                     Math.ceil(document.querySelector('tr.upload .badge').getBoundingClientRect().right)]
                    """),
            ], window: (400, 900)
        ).run()
        #expect(result.ok, "\(result.error ?? "")")
        let values = try #require(result.evals.first as? [Any])
        let scrollWidth = try #require(values[0] as? Int)
        let width = try #require(values[1] as? Int)
        #expect(scrollWidth <= width, "the page does not scroll sideways")
        #expect(values[2] as? String == "block", "each upload is a stack of labelled values")
        #expect((values[3] as? Int ?? .max) <= width, "the stage badge is in view")
        #expect(fake.stderr.contains("request /uploads/events auth=none"), "no token, no header")
        expectNoRefusals(result)
    }
}
