import Foundation
import Testing

/// curl itself sending 1 GiB that is generated on the fly (random bytes through a FIFO,
/// hashed as they pass, never stored).
@Suite(.serialized) struct CurlStreamTests {
    @Test(arguments: ["/upload", "/legacy"])
    func curlSendsOneGibibyteThroughAFIFO(path: String) throws {
        let upstream = try startDemoUpstream()
        let proxy = try startProxy(UploadTests.config(upstream: upstream.url), workers: 1)
        let directory = NSTemporaryDirectory() + "formgate-fifo-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let script = """
            set -euo pipefail
            cd '\(directory)'
            mkfifo body
            (head -c 1073741824 /dev/urandom | tee body | sha256sum | cut -d' ' -f1 > expected) &
            \(try tool("curl")) -sS --fail-with-body -F 'big=@body;filename=big.bin' '\(proxy.url)\(path)' > receipt
            wait
            """
        let result = try run(try tool("bash"), ["-c", script])
        #expect(result.status == 0)
        let expected = try String(contentsOfFile: directory + "/expected", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let receipt = try jsonObject(try Data(contentsOf: URL(fileURLWithPath: directory + "/receipt")))
        let files = try #require(receipt["files"] as? [[String: Any]])
        #expect(files.first?["size"] as? Int == 1 << 30)
        #expect(files.first?["sha256"] as? String == expected)
        #expect((receipt["boundary"] as? String)?.hasPrefix("----FormGate") == true)
        #expect(proxy.peakRSSKiB <= 64 * 1024)
    }
}
