import Foundation
import Testing

/// `scan:` fails closed (issue 30): a scanner that is stopped, refuses, hangs or answers
/// something that is not clamd's verdict makes the upload 503 and the upstream never holds a
/// complete request; `on_error: allow` delivers it byte-exact, logged `error`. clamd's own
/// size-limit heuristic is a failure, never `clean`; a file over `max_bytes` is 413, or
/// delivered unscanned (`skipped`) under `oversize: allow`. Every verdict is the status, the
/// access log's `scan` and `/metrics`.
@Suite(.serialized) struct ScanFailureTests {
    /// How the scanner fails.
    enum Failure: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// clamd started, then stopped: its socket is gone.
        case clamdStopped
        /// A socket path nothing listens on any more (`ECONNREFUSED`).
        case refused
        /// Reads the whole scan, never answers (the scanner timeout is 1 s).
        case hung
        /// Answers `garbage` and closes.
        case garbage
        /// Answers `stream: OK` without the NUL that ends a `z` reply, and closes.
        case okWithoutNUL

        var testDescription: String { rawValue }

        /// The scanner timeout: 1 s for the hung scanner (its failure), else one no verdict here
        /// waits for (a busy machine does not turn another failure into a timeout).
        var timeout: String { self == .hung ? "1s" : "30s" }

        /// Starts the failing scanner; its address, and what keeps it alive.
        func start() throws -> (address: String, scanner: AnyObject) {
            switch self {
            case .clamdStopped:
                let clamd = try Clamd()
                clamd.stop()
                return (clamd.address, clamd)
            case .refused:
                let fake = try FakeScanner(reply: Array("stream: OK\0".utf8))
                fake.refuseConnections()
                return (fake.address, fake)
            case .hung:
                let fake = try FakeScanner(reply: nil)
                return (fake.address, fake)
            case .garbage:
                let fake = try FakeScanner(reply: Array("garbage".utf8))
                return (fake.address, fake)
            case .okWithoutNUL:
                let fake = try FakeScanner(reply: Array("stream: OK".utf8))
                return (fake.address, fake)
            }
        }
    }

    /// The file every failure test uploads: 1 MiB and a little, seeded.
    static let fileSize = (1 << 20) + 12_345

    /// SHA-256 of the file at `path`, hex.
    static func sha256(_ path: String) throws -> String {
        Digest.hex(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// The demo upstream's receipt (`files[0]`) in `body`.
    static func receivedFile(_ body: String) throws -> [String: Any] {
        let receipt = try jsonObject(Data(body.utf8))
        return try #require((receipt["files"] as? [[String: Any]])?.first, "no file in \(body.prefix(300))")
    }

    /// The scan fails on a `reject` route: 503 naming the failed scan, logged `error`, counted;
    /// the recorder upstream never holds a whole request (`/stream`: at most an aborted one;
    /// `/buffer`: not a byte).
    @Test(arguments: Failure.allCases, ["/stream", "/buffer"])
    func aFailedScanIsRefused503(_ failure: Failure, path: String) throws {
        let (address, scanner) = try failure.start()
        defer { withExtendedLifetime(scanner) {} }
        let upstream = try recordingUpstream()
        defer { upstream.stop() }
        let rig = try ScanRig(scanner: address, upstream: upstream.url, timeout: failure.timeout)
        defer { rig.stop() }
        let file = try rig.file("f.bin", count: Self.fileSize, seed: 0x5CA5)
        let answer = try rig.upload(path, [("file", file)])
        #expect(answer.status == 503, "\(failure) \(path): \(answer.body.prefix(300))")
        #expect(answer.body.contains("virus scan"), "\(failure) \(path): \(answer.body.prefix(300))")
        let line = rig.logLine(1)
        #expect(line?["status"] as? Int == 503, "\(String(describing: line))")
        #expect(scanResults(line) == ["error"], "\(String(describing: line))")
        #expect(rig.metric("formgate_scan_total{route=\"\(path)\",result=\"error\"}", reaches: 1) == 1)
        #expect(try rig.proxy.metric("formgate_scan_total{route=\"\(path)\",result=\"clean\"}") == nil)
        #expect(deliveries(upstream).isEmpty, "\(failure) \(path): the upstream holds a complete request")
        if path == "/buffer" {
            #expect(upstream.byteCount == 0, "\(failure): a buffer route sent \(upstream.byteCount) bytes")
        }
    }

    /// The same failure on the `on_error: allow` route: delivered byte-exact (the demo
    /// upstream's size and SHA-256 of the file), logged `error`, counted as `error`.
    @Test(arguments: Failure.allCases)
    func aFailedScanOnAnAllowRouteIsDeliveredAndLoggedError(_ failure: Failure) throws {
        let (address, scanner) = try failure.start()
        defer { withExtendedLifetime(scanner) {} }
        let upstream = try startDemoUpstream()
        defer { upstream.stop() }
        let rig = try ScanRig(scanner: address, upstream: upstream.url, timeout: failure.timeout)
        defer { rig.stop() }
        let file = try rig.file("f.bin", count: Self.fileSize, seed: 0x5CA6)
        let answer = try rig.upload("/allow", [("file", file)])
        #expect(answer.status == 200, "\(failure): \(answer.body.prefix(300))")
        let received = try Self.receivedFile(answer.body)
        #expect(received["size"] as? Int == Self.fileSize, "\(failure)")
        #expect(received["sha256"] as? String == (try Self.sha256(file)), "\(failure)")
        let line = rig.logLine(1)
        #expect(line?["status"] as? Int == 200, "\(String(describing: line))")
        #expect(scanResults(line) == ["error"], "\(String(describing: line))")
        #expect(rig.metric("formgate_scan_total{route=\"/allow\",result=\"error\"}", reaches: 1) == 1)
    }

    /// Over HTTP/2 (h2c), a hung scanner times out the same way: 503 on `/stream` with nothing
    /// whole upstream, delivered and logged `error` on `/allow`.
    @Test func aHungScannerOverHTTP2IsRefusedOrAllowed() throws {
        let (address, scanner) = try Failure.hung.start()
        defer { withExtendedLifetime(scanner) {} }
        let upstream = try recordingUpstream()
        defer { upstream.stop() }
        let rig = try ScanRig(scanner: address, upstream: upstream.url, timeout: Failure.hung.timeout)
        defer { rig.stop() }
        let file = try rig.file("f.bin", count: Self.fileSize, seed: 0x5CAC)
        let refused = try rig.upload("/stream", [("file", file)], http2: true)
        #expect(refused.status == 503, "\(refused.body.prefix(300))")
        #expect(scanResults(rig.logLine(1)) == ["error"], "\(String(describing: rig.logLine(1)))")
        #expect(deliveries(upstream).isEmpty, "the upstream holds a complete request")
        let allowed = try rig.upload("/allow", [("file", file)], http2: true)
        #expect(allowed.status == 200, "\(allowed.body.prefix(300))")
        #expect(scanResults(rig.logLine(2)) == ["error"], "\(String(describing: rig.logLine(2)))")
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
        let delivered = deliveries(upstream)
        #expect(delivered.count == 1)
        #expect(
            delivered.last.map { multipartParts($0).last?.bytes == bytes } == true, "the file, byte-exact")
    }

    /// A file over clamd's own `MaxFileSize` (1M, `AlertExceedsMax yes`): clamd answers its
    /// `Heuristics.Limits.Exceeded` "signature", which is not a verdict on the content: 503 on
    /// `/stream` (nothing complete upstream), delivered and logged `error` on `/allow`, never
    /// `clean` nor `infected`. A file under the limit through the same clamd is clean (the
    /// refusal is the limit's).
    @Test func aFileOverClamdsMaxFileSizeIsRefusedNeverClean() throws {
        let clamd = try Clamd(maxFileSize: "1M", streamMaxLength: "300M")
        defer { clamd.stop() }
        let upstream = try recordingUpstream()
        defer { upstream.stop() }
        let rig = try ScanRig(scanner: clamd.address, upstream: upstream.url, timeout: "30s")
        defer { rig.stop() }
        let small = try rig.file("small.bin", count: 512 << 10, seed: 0x5CA7)
        let large = try rig.file("large.bin", count: 2 << 20, seed: 0x5CA8)

        let control = try rig.upload("/stream", [("file", small)])
        #expect(control.status == 200, "\(control.body.prefix(300))")
        #expect(scanResults(rig.logLine(1)) == ["clean"])
        #expect(deliveries(upstream).count == 1)

        let refused = try rig.upload("/stream", [("file", large)])
        #expect(refused.status == 503, "\(refused.body.prefix(300))")
        #expect(refused.body.contains("Heuristics.Limits.Exceeded"), "\(refused.body.prefix(300))")
        #expect(scanResults(rig.logLine(2)) == ["error"], "\(String(describing: rig.logLine(2)))")
        #expect(deliveries(upstream).count == 1, "the large file reached the upstream whole")

        let allowed = try rig.upload("/allow", [("file", large)])
        #expect(allowed.status == 200, "\(allowed.body.prefix(300))")
        #expect(scanResults(rig.logLine(3)) == ["error"], "\(String(describing: rig.logLine(3)))")
        let delivered = deliveries(upstream)
        #expect(delivered.count == 2)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: large)))
        #expect(
            delivered.last.map { multipartParts($0).last?.bytes == bytes } == true, "the file, byte-exact")
        #expect(rig.metric("formgate_scan_total{route=\"/stream\",result=\"error\"}", reaches: 1) == 1)
        #expect(rig.metric("formgate_scan_total{route=\"/allow\",result=\"error\"}", reaches: 1) == 1)
        #expect(rig.metric("formgate_scan_total{route=\"/stream\",result=\"clean\"}", reaches: 1) == 1)
    }

    /// `max_bytes: 1MiB`: a file of exactly 1 MiB is scanned (clean); one byte more is 413 on
    /// `/stream` (logged `skipped`, nothing complete upstream) and delivered unscanned,
    /// byte-exact, on `/allow` (logged `skipped`).
    @Test func aFileOverMaxBytesIs413OrSkipped() throws {
        let clamd = try Clamd()
        defer { clamd.stop() }
        let upstream = try recordingUpstream()
        defer { upstream.stop() }
        let rig = try ScanRig(
            scanner: clamd.address, upstream: upstream.url, timeout: "30s", maxBytes: "1MiB")
        defer { rig.stop() }
        let limit = try rig.file("limit.bin", count: 1 << 20, seed: 0x5CA9)
        let over = try rig.file("over.bin", count: (1 << 20) + 1, seed: 0x5CAA)

        let atLimit = try rig.upload("/stream", [("file", limit)])
        #expect(atLimit.status == 200, "\(atLimit.body.prefix(300))")
        #expect(scanResults(rig.logLine(1)) == ["clean"], "\(String(describing: rig.logLine(1)))")
        #expect(deliveries(upstream).count == 1)

        let refused = try rig.upload("/stream", [("file", over)])
        #expect(refused.status == 413, "\(refused.body.prefix(300))")
        let line = rig.logLine(2)
        #expect(line?["status"] as? Int == 413)
        #expect(scanResults(line) == ["skipped"], "\(String(describing: line))")
        #expect(deliveries(upstream).count == 1, "the oversize file reached the upstream whole")

        let allowed = try rig.upload("/allow", [("file", over)])
        #expect(allowed.status == 200, "\(allowed.body.prefix(300))")
        #expect(scanResults(rig.logLine(3)) == ["skipped"], "\(String(describing: rig.logLine(3)))")
        let delivered = deliveries(upstream)
        #expect(delivered.count == 2)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: over)))
        #expect(
            delivered.last.map { multipartParts($0).last?.bytes == bytes } == true, "the file, byte-exact")
        #expect(rig.metric("formgate_scan_total{route=\"/stream\",result=\"skipped\"}", reaches: 1) == 1)
        #expect(rig.metric("formgate_scan_total{route=\"/allow\",result=\"skipped\"}", reaches: 1) == 1)
    }

    /// A clean file: 200, delivered byte-exact, logged `clean`, and `/metrics` counts one clean
    /// scan on the route and one scan duration (no error, no infected).
    @Test func aCleanFileIsDeliveredLoggedAndCounted() throws {
        let clamd = try Clamd()
        defer { clamd.stop() }
        let upstream = try startDemoUpstream()
        defer { upstream.stop() }
        let rig = try ScanRig(scanner: clamd.address, upstream: upstream.url, timeout: "30s")
        defer { rig.stop() }
        let file = try rig.file("clean.bin", count: 300_001, seed: 0x5CAB)
        let answer = try rig.upload("/stream", [("file", file)])
        #expect(answer.status == 200, "\(answer.body.prefix(300))")
        let received = try Self.receivedFile(answer.body)
        #expect(received["size"] as? Int == 300_001)
        #expect(received["sha256"] as? String == (try Self.sha256(file)))
        let line = rig.logLine(1)
        #expect(line?["status"] as? Int == 200)
        #expect(scanResults(line) == ["clean"], "\(String(describing: line))")
        #expect(rig.metric("formgate_scan_total{route=\"/stream\",result=\"clean\"}", reaches: 1) == 1)
        #expect(try rig.proxy.metric("formgate_scan_duration_seconds_count") == 1)
        for result in ["error", "infected", "skipped"] {
            #expect(
                try rig.proxy.metric("formgate_scan_total{route=\"/stream\",result=\"\(result)\"}") == nil)
        }
    }
}
