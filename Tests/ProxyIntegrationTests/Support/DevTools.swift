import Foundation

/// One step of a `Resources/devtools.py` run (the driver's JSON steps, in order).
enum DevToolsStep {
    /// Polls the JavaScript expression every 100 ms until it is truthy; the run fails after the
    /// timeout, reporting the last value and the start of the DOM.
    case wait(String, timeoutMilliseconds: Int = 20000)
    /// Evaluates the expression (a promise is awaited); its JSON value is appended to `evals`.
    /// An exception fails the run.
    case eval(String)
    /// Saves a PNG of the viewport, or of the element `selector` matches, and reports its size and
    /// number of distinct colours in `screenshots`.
    case screenshot(path: String, selector: String? = nil)
    /// Loads another URL and waits for its load event.
    case navigate(String)
    /// Lets the page run (events keep being recorded).
    case sleep(milliseconds: Int)
    /// Creates the file: the test (waiting for it on another thread) may act on the page's
    /// world now, and the next steps see what it did.
    case signal(path: String)

    var json: [String: Any] {
        switch self {
        case .wait(let expression, let timeout): ["wait": expression, "timeout_ms": timeout]
        case .eval(let expression): ["eval": expression]
        case .screenshot(let path, let selector):
            selector.map { ["screenshot": path, "selector": $0] } ?? ["screenshot": path]
        case .navigate(let url): ["navigate": url]
        case .sleep(let milliseconds): ["sleep_ms": milliseconds]
        case .signal(let path): ["signal": path]
        }
    }
}

/// A screenshot the driver saved, as it decoded it.
struct DevToolsScreenshot {
    var path: String
    var width: Int
    var height: Int
    /// Distinct pixel colours (a blank capture has one).
    var colours: Int
}

/// A response head the page received.
struct DevToolsResponse {
    var url: String
    var status: Int
    var headers: [String: String]
}

/// What one driver run reported.
struct DevToolsResult {
    /// Every step ran (and every wait came true).
    var ok: Bool
    /// The values of the `eval` steps, in order (JSON values: `[String: Any]`, `[Any]`, `String`,
    /// `NSNumber`, `NSNull`).
    var evals: [Any]
    /// Every request URL the page made, its documents included, in order.
    var requests: [String]
    /// The response heads, in the order they arrived.
    var responses: [DevToolsResponse]
    /// Console calls, uncaught exceptions and browser log entries (CSP refusals among them), as
    /// `level: text`.
    var console: [String]
    var screenshots: [DevToolsScreenshot]
    /// Why the run failed.
    var error: String?
}

/// A script for `Resources/devtools.py`: headless Chromium (a fresh profile, killed at the end)
/// driven over the DevTools protocol on `--remote-debugging-pipe`. `url` (when set) is loaded
/// first, then the steps run; `initScript` runs in every document before the page's own scripts.
struct DevToolsScript {
    var url: String?
    var steps: [DevToolsStep]
    var window = (width: 1280, height: 900)
    var initScript: String?
    /// Headers sent with every request the page makes (on top of its own).
    var extraHeaders: [String: String] = [:]
    /// The whole run's limit (the driver stops there and reports where it was).
    var timeoutMilliseconds = 120_000

    /// Runs the script in `chromium` (a test fails, never skips, when it or Python is missing).
    func run() throws -> DevToolsResult {
        var script: [String: Any] = [
            "steps": steps.map(\.json), "window": [window.width, window.height],
            "timeout_ms": timeoutMilliseconds, "chromium": try tool("chromium"),
        ]
        if let url { script["url"] = url }
        if let initScript { script["init_script"] = initScript }
        if !extraHeaders.isEmpty { script["extra_headers"] = extraHeaders }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try python3())
        process.arguments = [UpstreamServerTests.resources.appendingPathComponent("devtools.py").path]
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(try JSONSerialization.data(withJSONObject: script))
        try input.fileHandleForWriting.close()
        let data = try readToEnd(output.fileHandleForReading.fileDescriptor)
        process.waitUntilExit()
        let object = try jsonObject(data)
        let screenshots = (object["screenshots"] as? [[String: Any]] ?? []).map {
            DevToolsScreenshot(
                path: $0["path"] as? String ?? "", width: $0["width"] as? Int ?? 0,
                height: $0["height"] as? Int ?? 0, colours: $0["colours"] as? Int ?? 0)
        }
        let responses = (object["responses"] as? [[String: Any]] ?? []).map {
            DevToolsResponse(
                url: $0["url"] as? String ?? "", status: $0["status"] as? Int ?? 0,
                headers: $0["headers"] as? [String: String] ?? [:])
        }
        return DevToolsResult(
            ok: object["ok"] as? Bool ?? false, evals: object["evals"] as? [Any] ?? [],
            requests: object["requests"] as? [String] ?? [], responses: responses,
            console: object["console"] as? [String] ?? [], screenshots: screenshots,
            error: object["error"] as? String)
    }
}
