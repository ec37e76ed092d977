import Foundation

/// Loads `url` in headless Chromium (a profile in `profile`, `extra` flags before the URL)
/// and returns the text of the page's `<pre id="result">` once its scripts ran within the
/// virtual time budget, with the HTML entities `--dump-dom` writes decoded.
func chromiumPageResult(
    _ url: String, profile: String, budgetMilliseconds: Int, extra: [String] = []
) throws -> String {
    let result = try run(
        try tool("chromium"),
        [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--user-data-dir=\(profile)",
        ] + extra + ["--virtual-time-budget=\(budgetMilliseconds)", "--dump-dom", url])
    let dom = String(decoding: result.output, as: UTF8.self)
    guard
        let text = dom.components(separatedBy: "<pre id=\"result\">").dropFirst().first?.components(
            separatedBy: "</pre>"
        ).first
    else { throw TestFailure("no result in \(dom.suffix(500))") }
    return text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&lt;", with: "<")
        .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
}
