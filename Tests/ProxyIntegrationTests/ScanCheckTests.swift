import Foundation
import Testing

/// `formgate check` reads clamd's own configuration and warns when a scanner's `max_bytes` is
/// more than clamd will scan, or when clamd would answer OK for a file it did not scan.
@Suite struct ScanCheckTests {
    static func check(clamdConf: String, maxBytes: String) throws -> (status: Int32, output: String) {
        let directory = NSTemporaryDirectory() + "formgate-check-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try clamdConf.write(toFile: directory + "/clamd.conf", atomically: true, encoding: .utf8)
        let config = """
            scanners:
              clamd: { address: "127.0.0.1:3310", max_bytes: \(maxBytes), config: \(directory)/clamd.conf }
            routes:
              - match: { path: /upload }
                multipart: { scan: { clamd: default } }

            """
        try config.write(toFile: directory + "/formgate.yaml", atomically: true, encoding: .utf8)
        let result = try run(formgateBinary, ["check", "-c", directory + "/formgate.yaml"])
        return (result.status, String(decoding: result.output, as: UTF8.self))
    }

    @Test func debiansDefaultsAreTooSmallForA100MiBScanner() throws {
        let debian =
            "LocalSocket /var/run/clamav/clamd.ctl\nMaxScanSize 100M\nMaxFileSize 25M\nStreamMaxLength 25M\n"
        let result = try Self.check(clamdConf: debian, maxBytes: "100MiB")
        #expect(result.status == 0, "warnings do not refuse the file: \(result.output)")
        #expect(result.output.contains("warning: scanners.clamd.default:"), "\(result.output)")
        #expect(result.output.contains("StreamMaxLength (26214400)"), "\(result.output)")
        #expect(result.output.contains("MaxFileSize (26214400)"), "\(result.output)")
        #expect(!result.output.contains("MaxScanSize"), "100M is enough: \(result.output)")
        #expect(result.output.contains("AlertExceedsMax"), "\(result.output)")
    }

    @Test func aClamdThatScansEverythingGivesNoWarning() throws {
        let fit = "StreamMaxLength 200M\nMaxFileSize 200M\nMaxScanSize 400M\nAlertExceedsMax yes\n"
        let result = try Self.check(clamdConf: fit, maxBytes: "100MiB")
        #expect(result.status == 0)
        #expect(!result.output.contains("warning"), "\(result.output)")
    }
}
