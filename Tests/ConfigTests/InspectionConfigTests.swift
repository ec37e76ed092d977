import Config
import Inspection
import ProxyCore
import Testing
import UploadRules

/// `scanners:` and a route's `multipart.scan` and `multipart.strip_metadata` (DESIGN.md,
/// "Inspection").
@Suite struct InspectionConfigTests {
    static func errors(_ text: String) -> [String] {
        guard case .failure(let errors) = ConfigLoader.load(text: text, file: "t.yaml") else { return [] }
        return errors.errors.map(\.description)
    }

    @Test func aScannerAndARouteThatScansLoad() throws {
        let text = """
            routes:
              - match: { path: /upload }
                multipart:
                  scan: { clamd: default, types: ["image/*", application/pdf], on_error: allow, oversize: allow }
            scanners:
              clamd: { address: unix:/run/clamav/clamd.ctl, timeout: 30s, max_bytes: 100MiB, connections: 16 }
            """
        let config = try ConfigLoader.load(text: text, file: "t.yaml").get()
        let scan = try #require(config.routes.first?.rules.inspection as? ScanRule)
        #expect(scan.scanner.address == .unix(path: "/run/clamav/clamd.ctl"))
        #expect(scan.scanner.timeoutMilliseconds == 30_000)
        #expect(scan.scanner.maxBytes == 100 << 20)
        #expect(scan.scanner.connections == 16)
        #expect(scan.types == ["image/*", "application/pdf"])
        #expect(scan.onError == .allow && scan.oversize == .allow)
        #expect(config.scanners["default"] == scan.scanner)
    }

    @Test func namedScannersAndTCPAddresses() throws {
        let text = """
            scanners:
              clamd:
                near: { address: "127.0.0.1:3310" }
                far: { address: "tcp://[::1]:3310", config: /etc/clamav/clamd.conf }
            routes:
              - match: { path: /a }
                multipart: { scan: { clamd: far } }
            """
        let config = try ConfigLoader.load(text: text, file: "t.yaml").get()
        #expect(config.scanners["near"]?.address == .tcp(host: "127.0.0.1", port: 3310))
        let scan = try #require(config.routes.first?.rules.inspection as? ScanRule)
        #expect(scan.scanner.address == .tcp(host: "::1", port: 3310))
        #expect(scan.scanner.configFile == "/etc/clamav/clamd.conf")
        #expect(scan.onError == .reject && scan.oversize == .reject && scan.types == ["*/*"])
    }

    @Test func badScannersAndScansAreRefused() {
        let lines = Self.errors(
            """
            scanners:
              clamd: { address: "clamd.sock", timeout: 0s, connections: 0 }
            routes:
              - match: { path: /a }
                multipart: { scan: { clamd: other, on_error: ignore, types: [images] } }
              - match: { path: /b }
                multipart: { scan: { types: ["*/*"] } }
            """)
        #expect(
            lines.contains { $0.contains("scanners.clamd.address: expected unix:/PATH or HOST:PORT") },
            "\(lines)")
        #expect(lines.contains { $0.contains("scanners.clamd.timeout: must be more than 0") }, "\(lines)")
        #expect(lines.contains { $0.contains("scanners.clamd.connections") }, "\(lines)")
        #expect(
            lines.contains { $0.contains("routes[0].multipart.scan.clamd: no scanner 'other'") }, "\(lines)")
        #expect(
            lines.contains { $0.contains("routes[0].multipart.scan.on_error: expected reject or allow") },
            "\(lines)")
        #expect(lines.contains { $0.contains("'images' is not type/subtype") }, "\(lines)")
        #expect(
            lines.contains { $0.contains("routes[1].multipart.scan.clamd: scan needs a scanner") }, "\(lines)"
        )
    }

    @Test func stripMetadataLoadsAndSniffsForItself() throws {
        let text = """
            routes:
              - match: { path: /a }
                multipart: { strip_metadata: { formats: [jpeg, png], keep: [orientation] } }
              - match: { path: /b }
                request_body: buffer
                multipart: { strip_metadata: { mode: remove }, sniff: { content_type: override } }
              - match: { path: /c }
                multipart: { strip_metadata: true }
            """
        let routes = Array(try ConfigLoader.load(text: text, file: "t.yaml").get().routes)
        let first = try #require(routes[0].rules.strip)
        #expect(first.formats == [.jpeg, .png] && first.mode == .blank)
        #expect(first.keepOrientation && !first.keepICC)
        #expect(routes[0].rules.sniff?.policy == .keep, "the format is the sniffed type's")
        #expect(routes[1].rules.strip?.mode == .remove)
        #expect(routes[1].rules.sniff?.policy == .override, "a configured sniff stays as it is")
        #expect(routes[2].rules.strip == StripOptions())
        #expect(routes[2].rules.strip?.keepICC == true)
    }

    @Test func removeNeedsABufferedBody() {
        let lines = Self.errors(
            """
            routes:
              - match: { path: /a }
                multipart: { strip_metadata: { mode: remove, formats: [gif], keep: [gps] } }
            """)
        #expect(
            lines.contains { $0.contains("strip_metadata.mode: remove changes the file's length") },
            "\(lines)")
        #expect(lines.contains { $0.contains("'gif' is not one of jpeg, png, webp, heic") }, "\(lines)")
        #expect(lines.contains { $0.contains("'gps' cannot be kept") }, "\(lines)")
    }

    @Test func clamdsOwnLimitsAreComparedWithMaxBytes() {
        let debian = ClamdConfigCheck(
            configuration: "# generated\nMaxScanSize 100M\nMaxFileSize 25M\nStreamMaxLength 25M\n")
        let problems = debian.problems(maxBytes: 100 << 20)
        #expect(problems.count == 3, "\(problems)")
        #expect(problems.contains { $0.contains("StreamMaxLength (26214400)") })
        #expect(problems.contains { $0.contains("AlertExceedsMax") })
        let fit = ClamdConfigCheck(
            configuration: "StreamMaxLength 300M\nMaxFileSize 300M\nMaxScanSize 1G\nAlertExceedsMax yes\n")
        #expect(fit.problems(maxBytes: 100 << 20).isEmpty)
        #expect(ClamdConfigCheck(configuration: "").maxScanSize == 400 << 20, "clamd's defaults")
    }
}
