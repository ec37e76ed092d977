import Foundation
import Testing

/// A tus route under test: its store directory, a recording upstream (every byte the
/// deliveries sent), and FormGate with one worker (its access-log lines in the order its
/// exchanges end).
final class TusRig {
    let directory: TusStoreDirectory
    let upstream: FakeUpstream
    /// The default upstream: the rest of the site, answering 404 to everything.
    let site: FakeUpstream
    let proxy: ServerProcess
    /// A client without a key.
    let client: TusClient

    init(
        maxSize: String = "1GiB", expireAfter: String = "1h", extra: String = "", auth: Bool = false,
        store: String? = nil
    ) throws {
        directory = try TusStoreDirectory()
        upstream = try recordingUpstream()
        site = try FakeUpstream(.answer("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
        var lines = extra
        if auth {
            let keys = try tusKeyFile(in: directory.parent)
            lines += "\n    auth: { api_keys: { file: \(keys), header: X-Api-Key } }"
        }
        proxy = try startProxy(
            tusConfig(
                upstream: upstream.url, store: store ?? directory.store, maxSize: maxSize,
                expireAfter: expireAfter, extra: lines, site: site.url),
            workers: 1)
        client = TusClient(port: proxy.port)
    }

    var alice: TusClient { TusClient(port: proxy.port, apiKey: tusAliceKey) }
    var bob: TusClient { TusClient(port: proxy.port, apiKey: tusBobKey) }

    deinit {
        proxy.stop()
        upstream.stop()
        site.stop()
    }

    /// Waits until every exchange answered so far has its access-log line: an OPTIONS marker
    /// is answered after them on the one worker, so its line comes after theirs.
    func settleLog() {
        let options = { self.proxy.accessLog.filter { $0["method"] as? String == "OPTIONS" }.count }
        let before = options()
        _ = try? client.send("OPTIONS", "/files")
        #expect(eventually { options() > before }, "the OPTIONS marker was not logged: \(proxy.stdout)")
    }

    /// Nothing went upstream: no connection, no byte, no access-log line of the deliver path.
    func expectNothingDelivered(_ label: String, sourceLocation: SourceLocation = #_sourceLocation) {
        settleLog()
        #expect(
            upstream.connections == 0 && upstream.byteCount == 0,
            "\(label): the upstream received \(upstream.byteCount) bytes on \(upstream.connections) connections",
            sourceLocation: sourceLocation)
        #expect(
            logLines(proxy, path: "/upload").isEmpty, "\(label): a delivery was logged",
            sourceLocation: sourceLocation)
    }

    /// The upstream received `count` deliveries, the last one of `bytes`: its file part named
    /// `filename`, after the `title` field when given. Checks the deliveries' access-log lines.
    func expectOneDelivery(
        of bytes: [UInt8], filename: String, title: String?, _ label: String, count: Int = 1,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let received = deliveries(upstream)
        #expect(
            received.count == count, "\(label): \(received.count) deliveries", sourceLocation: sourceLocation)
        guard let request = received.last else { return }
        #expect(
            request.requestLine == "POST /upload HTTP/1.1", "\(label): \(request.requestLine)",
            sourceLocation: sourceLocation)
        #expect(
            request.values("Content-Length").first == String(request.body.count),
            "\(label): the delivery's Content-Length", sourceLocation: sourceLocation)
        let parts = multipartParts(request)
        #expect(
            parts.map(\.name) == (title == nil ? ["file"] : ["title", "file"]),
            "\(label): parts \(parts.map(\.name))",
            sourceLocation: sourceLocation)
        if let title {
            #expect(
                parts.first?.bytes == Array(title.utf8), "\(label): title", sourceLocation: sourceLocation)
        }
        let file = parts.last { $0.name == "file" }
        #expect(file?.filename == filename, "\(label): filename", sourceLocation: sourceLocation)
        #expect(
            file?.bytes.count == bytes.count && file?.bytes == bytes,
            "\(label): the delivered file (\(file?.bytes.count ?? -1) bytes) is not the upload (\(bytes.count))",
            sourceLocation: sourceLocation)
        settleLog()
        let lines = logLines(proxy, path: "/upload")
        #expect(
            lines.count == count
                && lines.allSatisfy { $0["method"] as? String == "POST" && $0["status"] as? Int == 200 },
            "\(label): delivery lines \(lines)", sourceLocation: sourceLocation)
    }

    /// HEAD answers `offset`, `<id>.bin` holds that many bytes, and the store has nothing but
    /// upload files.
    func expectStored(
        _ id: String, offset: Int64, as client: TusClient? = nil, _ label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let head = try? (client ?? self.client).headOf(id)
        #expect(
            head?.status == 200 && head?.offset == offset,
            "\(label): HEAD \(head.map { "\($0)" } ?? "failed")",
            sourceLocation: sourceLocation)
        #expect(
            directory.binSize(id) == offset, "\(label): the .bin holds \(directory.binSize(id)) bytes",
            sourceLocation: sourceLocation)
        #expect(directory.strayFiles.isEmpty, "\(label): \(directory.files)", sourceLocation: sourceLocation)
    }

    /// The access-log lines with `status`.
    func lines(status: Int) -> [[String: Any]] {
        proxy.accessLog.filter { $0["status"] as? Int == status }
    }
}

/// Seeded bytes for a small upload.
func seededBytes(_ count: Int, seed: UInt64) -> [UInt8] { SeededRandom.bytes(count, seed: seed) }
