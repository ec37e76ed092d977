import Foundation
import Testing

@testable import Proxy

/// The admin page as compiled: the same bytes the browser tests load (ProxyIntegrationTests'
/// fake extracts them from the Swift source), and a document that needs nothing from outside
/// and keeps to what the admin's Content-Security-Policy allows.
@Suite struct AdminPageTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func theBrowserTestsLoadTheCompiledPage() throws {
        let python = ProcessInfo.processInfo.environment["FORMGATE_PYTHON"] ?? "/usr/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw AuthTestFailure("\(python) is not installed (make test installs python3)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [
            Self.root.appendingPathComponent("Tests/ProxyIntegrationTests/Resources/admin_page_fake.py").path,
            "--page", Self.root.appendingPathComponent("Sources/Proxy/AdminPage.swift").path, "--print-page",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var data = Data()
        while case let chunk = output.fileHandleForReading.availableData, !chunk.isEmpty { data += chunk }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(String(decoding: data, as: UTF8.self) == AdminPage.html)
    }

    @Test func thePageNamesNoOutsideResourceAndNoInlineHandler() throws {
        let html = AdminPage.html
        #expect(html.hasPrefix("<!doctype html>") && html.hasSuffix("</html>"))
        for outside in ["http:", "https:", "//", "@import", "url("] {
            #expect(!html.contains("=\"\(outside)") && !html.contains("='\(outside)"), "\(outside)")
        }
        #expect(!html.contains("http://") && !html.contains("https://"))
        // Handlers as attributes and text parsed as markup would break the CSP or the escaping.
        #expect(html.firstMatch(of: /<[^>]*\son[a-z]+\s*=/) == nil)
        for banned in [
            "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "EventSource(",
        ] {
            #expect(!html.contains(banned), "\(banned)")
        }
        #expect(html.components(separatedBy: "<script>").count == 2, "one inline script")
        for hook in ["id=\"in-flight\"", "id=\"finished\"", "'upload'", "'finished'", "formgateUpdates"] {
            #expect(html.contains(hook), "\(hook)")
        }
    }
}
