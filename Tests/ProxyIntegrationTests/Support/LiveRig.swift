import Foundation
import Testing

/// Five uploads in flight through one FormGate, each held where the test wants it until
/// `release()` (issue 32's live view): a slow HTTP/1.1 upload (`receiving`), one whose scan
/// verdict a held fake clamd keeps back (`held:scan`), a tus PATCH (`receiving`, with its
/// offset and length), an HTTP/2 stream (`receiving`, `h2`), and one whose upstream holds its
/// answer (`waiting_upstream`, then 201). The admin listener needs `token`; the slow upload
/// carries an `Authorization` and a `Cookie` that must never show.
final class LiveRig: @unchecked Sendable {
    static let token = "admin-token-5f1d0c9a7e3b"
    static let clientBearer = "client-bearer-91ab77"
    static let clientCookie = "cookie-value-3c2d"
    /// Every secret an admin answer must not hold.
    static let secrets = [token, clientBearer, clientCookie]

    let upstream: ServerProcess
    let gated: ServerProcess
    let scanner: FakeScanner
    let tusStore: TusStoreDirectory
    let proxy: ServerProcess
    let directory: String
    let releaseFile: String
    private let released = Counter()
    private var threads: [Thread] = []
    private var h2Upload: Process?
    private let h2Output = Pipe()
    /// Each upload's answer status once it has one, by name.
    private let lock = NSLock()
    private var statuses: [String: Int] = [:]

    init() throws {
        directory = NSTemporaryDirectory() + "formgate-live-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        releaseFile = directory + "/release"
        let tokenFile = directory + "/admin.token"
        try (Self.token + "\n").write(toFile: tokenFile, atomically: true, encoding: .utf8)
        upstream = try startDemoUpstream()
        gated = try ServerProcess(
            try python3(),
            [UpstreamServerTests.resources.appendingPathComponent("gated_upstream.py").path, releaseFile])
        scanner = try FakeScanner(reply: Array("stream: OK\0".utf8), held: true)
        tusStore = try TusStoreDirectory()
        proxy = try startListeners(
            ["127.0.0.1:0", "{ address: 127.0.0.1:0, http2: { h2c: true } }"],
            """
            admin: { listen: 127.0.0.1:0, token_file: \(tokenFile) }
            upstream: \(upstream.url)
            scanners:
              clamd: { address: \(scanner.address), timeout: 120s }
            routes:
              - name: slow
                match: { path: /slow }
                multipart: { rename_fields: { upload: file } }
              - name: scanned
                match: { path: /scanned }
                multipart: { scan: { clamd: default } }
              - name: gated
                match: { path: /gated }
                upstream: \(gated.url)
              - name: resumable
                match: { path: /files }
                tus:
                  store: \(tusStore.store)
                  max_size: 1GiB
                  expire_after: 1h
                  deliver: { path: /upload, file_field: file }

            """, workers: 2)
    }

    deinit { stop() }

    var adminPort: Int { proxy.adminPort ?? 0 }
    var h2Port: Int { proxy.listeners.count > 1 ? proxy.listeners[1].port : 0 }

    func status(_ name: String) -> Int? { lock.withLock { statuses[name] } }

    private func answered(_ name: String, _ status: Int) { lock.withLock { statuses[name] = status } }

    /// Starts the five uploads.
    func start() throws {
        trickle(
            "slow", path: "/slow",
            extraHeaders: "Authorization: Bearer \(Self.clientBearer)\r\nCookie: sid=\(Self.clientCookie)\r\n"
        )
        try upload("scanned", path: "/scanned", bytes: 64 << 10)
        try upload("gated", path: "/gated", bytes: 32 << 10)
        try tus()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try python3())
        process.arguments = [
            UpstreamServerTests.resources.appendingPathComponent("h2_gated_upload.py").path, "127.0.0.1",
            String(h2Port), "/slow", String(4 << 20), releaseFile,
        ]
        process.standardOutput = h2Output
        try process.run()
        h2Upload = process
    }

    /// Lets every upload finish.
    func release() {
        released.add(1)
        _ = FileManager.default.createFile(atPath: releaseFile, contents: Data())
        scanner.releaseReplies()
    }

    /// Waits for the five answers: name → status.
    func answers() throws -> [String: Int] {
        if let process = h2Upload {
            process.waitUntilExit()
            let result = try jsonObject(h2Output.fileHandleForReading.readDataToEndOfFile())
            answered("h2", result["status"] as? Int ?? 0)
        }
        for thread in threads { while !thread.isFinished { Thread.sleep(forTimeInterval: 0.01) } }
        return lock.withLock { statuses }
    }

    /// A multipart body of `count` file bytes (field `upload`) under boundary `b`.
    static func multipart(_ count: Int, filename: String) -> [UInt8] {
        Array(
            "--b\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"\(filename)\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                .utf8) + [UInt8](repeating: 0x61, count: count) + Array("\r\n--b--\r\n".utf8)
    }

    /// An HTTP/1.1 upload whose body goes 1 KiB every 100 ms until `release`, then whole.
    private func trickle(_ name: String, path: String, extraHeaders: String) {
        let body = Self.multipart(8 << 20, filename: "slow.bin")
        let port = proxy.port
        runUpload(name) { [released] client in
            client.send(
                "POST \(path) HTTP/1.1\r\nHost: live\r\n\(extraHeaders)Content-Type: multipart/form-data; boundary=b\r\nContent-Length: \(body.count)\r\n\r\n"
            )
            var sent = 0
            while sent < body.count {
                let step = released.value == 0 ? 1024 : body.count - sent
                client.send(Array(body[sent..<(sent + step)]))
                sent += step
                if released.value == 0 { Thread.sleep(forTimeInterval: 0.1) }
            }
            _ = port
        }
    }

    /// An HTTP/1.1 upload sent whole at once.
    private func upload(_ name: String, path: String, bytes: Int) throws {
        let body = Self.multipart(bytes, filename: "\(name).bin")
        runUpload(name) { client in
            client.send(
                "POST \(path) HTTP/1.1\r\nHost: live\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: \(body.count)\r\n\r\n"
            )
            client.send(body)
        }
    }

    /// A tus upload of 1 MiB whose PATCH trickles until `release`.
    private func tus() throws {
        let client = TusClient(port: proxy.port)
        let length = 1 << 20
        let id = try client.createID(length: Int64(length), metadata: [("filename", "tus.bin")])
        let patch = try client.openPatch(id, offset: 0, contentLength: Int64(length))
        let thread = Thread { [released, self] in
            var sent = 0
            while sent < length {
                let step = released.value == 0 ? 1024 : length - sent
                patch.send([UInt8](repeating: 0x74, count: step))
                sent += step
                if released.value == 0 { Thread.sleep(forTimeInterval: 0.1) }
            }
            answered("tus", patch.readResponse(timeout: 60)?.status ?? 0)
        }
        threads.append(thread)
        thread.start()
    }

    private func runUpload(_ name: String, _ send: @escaping @Sendable (RawClient) -> Void) {
        let port = proxy.port
        let thread = Thread { [self] in
            guard let client = try? RawClient(port: port) else { return answered(name, 0) }
            send(client)
            answered(name, client.readResponse(timeout: 60)?.status ?? 0)
        }
        threads.append(thread)
        thread.start()
    }

    func stop() {
        release()
        h2Upload?.terminate()
        proxy.stop()
        gated.stop()
        upstream.stop()
        scanner.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    // MARK: The admin

    /// A GET on the admin listener (`token`: nil sends none); status, head and body.
    func admin(_ path: String, token: String? = LiveRig.token) throws -> (
        status: Int, head: String, body: String
    ) {
        let client = try RawClient(port: adminPort)
        let authorization = token.map { "Authorization: Bearer \($0)\r\n" } ?? ""
        client.send("GET \(path) HTTP/1.1\r\nHost: admin\r\n\(authorization)\r\n")
        let response = try #require(client.readResponse())
        return (response.status, response.head, String(decoding: response.body, as: UTF8.self))
    }

    /// `GET /uploads`, parsed.
    func uploads() throws -> (inFlight: [[String: Any]], finished: [[String: Any]]) {
        let answer = try admin("/uploads")
        let document = try jsonObject(Data(answer.body.utf8))
        return (
            document["in_flight"] as? [[String: Any]] ?? [], document["finished"] as? [[String: Any]] ?? []
        )
    }
}
