import Foundation
import Testing

/// The upstreams a tus route delivers finished uploads to, in the tus acceptance tests: PHP's
/// `$_FILES` (`docker/php/upload.php`), Werkzeug (`Tests/Conformance/werkzeug_server.py`) and
/// the Qiniu form-upload mock (`Resources/qiniu_mock.py`, with a token FormGate injects).
enum TusUpstreamKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case php, werkzeug, qiniu

    var testDescription: String { rawValue }

    /// The route's `multipart:` rules: the file renamed by a template (and for Qiniu the token
    /// and key injected before the file, as a Qiniu form upload needs).
    var multipartYAML: String {
        switch self {
        case .php, .werkzeug:
            return "    multipart: { filename: \"{uuid}{ext}\" }\n"
        case .qiniu:
            return """
                    multipart:
                      filename: "{uuid}{ext}"
                      inject:
                        - { name: token, before: file, qiniu: { access_key: test-ak, secret_key: test-sk, scope: "photos:{filename}", ttl: 1h } }
                        - { name: key, before: file, value: "{filename}" }

                """
        }
    }
}

/// A started upstream of one kind.
struct TusUpstream {
    let kind: TusUpstreamKind
    let server: ServerProcess
    let port: Int
    /// Where PHP counts the requests it ran (`Resources/tus_php_upload.php`).
    var countFile: String?

    var url: String { "http://127.0.0.1:\(port)" }

    /// PHP's settings for uploads up to 128 MiB (the 64 MiB cases).
    static let phpINI = ["upload_max_filesize=128M", "post_max_size=130M", "memory_limit=512M"]

    static func start(_ kind: TusUpstreamKind) throws -> TusUpstream {
        switch kind {
        case .php:
            let port = try freePort()
            return try startPHP(onPort: port)
        case .werkzeug:
            let server = try startWerkzeug()
            return TusUpstream(kind: kind, server: server, port: server.port)
        case .qiniu:
            let server = try ServerProcess(
                try python3(),
                [
                    UpstreamServerTests.resources.appendingPathComponent("qiniu_mock.py").path, "test-ak",
                    "test-sk", "photos",
                ])
            return TusUpstream(kind: kind, server: server, port: server.port)
        }
    }

    /// PHP's built-in server running `docker/php/upload.php` on `port` (also a port FormGate was
    /// pointed at while nothing listened there) through `Resources/tus_php_upload.php`, which
    /// counts the requests PHP runs in a file (`postsSeen`).
    static func startPHP(onPort port: Int) throws -> TusUpstream {
        let countFile = NSTemporaryDirectory() + "formgate-tus-php-\(UUID().uuidString).log"
        var environment = ProcessInfo.processInfo.environment
        environment["FORMGATE_COUNT_FILE"] = countFile
        let server = try ServerProcess(
            try tool("php"),
            phpINI.flatMap { ["-d", $0] } + [
                "-S", "127.0.0.1:\(port)",
                UpstreamServerTests.resources.appendingPathComponent("tus_php_upload.php").path,
            ],
            environment: environment, waitForListening: false, removingAtStop: [countFile])
        guard eventually(within: 30, { (try? RawClient(port: port)) != nil }) else {
            throw TestFailure("php -S did not start on \(port): \(server.stderr)")
        }
        return TusUpstream(kind: .php, server: server, port: port, countFile: countFile)
    }

    /// The POSTs the upstream itself counted: PHP's counter file (written before it answers),
    /// Werkzeug's request log on standard error (written after it answered: poll for it); nil
    /// for the Qiniu mock, which logs nothing (the access log counts for it).
    var postsSeen: Int? {
        switch kind {
        case .php:
            let text = countFile.flatMap { try? String(contentsOfFile: $0, encoding: .utf8) } ?? ""
            return text.split(separator: "\n").filter { $0.hasPrefix("POST ") }.count
        case .werkzeug:
            // `127.0.0.1 - - [date] "POST /upload HTTP/1.1" 200 -`
            return server.stderr.split(separator: "\n").filter { $0.contains("\"POST ") }.count
        case .qiniu:
            return nil
        }
    }

    /// Whether the upstream saw exactly one POST (Werkzeug's log line may trail its answer).
    func sawOnePost() -> Bool {
        guard postsSeen != nil else { return true }
        eventually(within: 10) { (postsSeen ?? 0) >= 1 }
        return postsSeen == 1
    }
}

/// What an upstream says it received: the file part and the fields.
struct TusReceipt: CustomStringConvertible {
    var filename: String?
    var type: String?
    var size: Int?
    var sha256: String?
    /// Field values (PHP, Werkzeug); the Qiniu mock names its fields only.
    var fields: [String: String] = [:]
    var fieldNames: [String] = []
    var files = 0
    var raw: String

    var description: String { raw }

    /// Reads an upstream's JSON answer.
    init(_ kind: TusUpstreamKind, _ body: [UInt8]) throws {
        raw = String(decoding: body, as: UTF8.self)
        let object = try jsonObject(Data(body))
        switch kind {
        case .php:
            // `$_POST` is `[]` when empty (PHP encodes an empty array as a list).
            fields = (object["post"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
            let list = object["files"] as? [[String: Any]] ?? []
            files = list.count
            if let file = list.first {
                filename = file["name"] as? String
                type = file["type"] as? String
                size = file["size"] as? Int
                sha256 = file["sha256"] as? String
                #expect(file["error"] as? Int == 0, "PHP's upload error: \(raw)")
                #expect(file["field"] as? String == "file")
            }
        case .werkzeug:
            fields = (object["fields"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
            let list = object["files"] as? [[String: Any]] ?? []
            files = list.count
            if let file = list.first {
                filename = file["filename"] as? String
                type = file["type"] as? String
                size = file["size"] as? Int
                sha256 = file["sha256"] as? String
                #expect(file["field"] as? String == "file")
            }
        case .qiniu:
            #expect(object["error"] == nil, "the Qiniu mock refused: \(raw)")
            fieldNames = object["fields"] as? [String] ?? []
            files = object["sha256"] == nil ? 0 : 1
            filename = object["key"] as? String
            type = object["mimeType"] as? String
            size = object["fsize"] as? Int
            sha256 = object["sha256"] as? String
        }
        if kind != .qiniu { fieldNames = fields.keys.sorted() }
    }
}

/// A tus route (`/files`, its store a fresh temp directory) delivering to one upstream, in a
/// FormGate of its own.
struct TusSetup {
    let store: String
    let proxy: ServerProcess

    /// The route's configuration, delivering to `upstreamURL` with `kind`'s rules.
    static func routeYAML(
        _ kind: TusUpstreamKind, upstreamURL: String, store: String, path: String = "/files",
        name: String = "resumable", multipartYAML: String? = nil
    ) -> String {
        """
          - name: \(name)
            match: { path: \(path) }
            upstream: \(upstreamURL)
            request_body: stream
            tus:
              store: \(store)
              max_size: 1GiB
              expire_after: 1h
              deliver: { path: /upload, file_field: file, fields: [title] }

        """ + (multipartYAML ?? kind.multipartYAML)
    }

    /// A fresh store directory's path (FormGate creates it).
    static func storePath() -> String {
        NSTemporaryDirectory() + "formgate-tus-\(UUID().uuidString)"
    }

    /// FormGate with one tus route to `upstreamURL`, on `listeners` (the default: one
    /// HTTP/1.1 address), with `kind`'s rules or `multipartYAML`, its store `store` (default: a
    /// fresh directory).
    init(
        _ kind: TusUpstreamKind, upstreamURL: String, listeners: [String]? = nil,
        multipartYAML: String? = nil,
        workers: Int = 2, store: String? = nil
    ) throws {
        self.store = store ?? Self.storePath()
        let routes =
            "routes:\n"
            + Self.routeYAML(kind, upstreamURL: upstreamURL, store: self.store, multipartYAML: multipartYAML)
        if let listeners {
            proxy = try startListeners(listeners, routes, workers: workers)
        } else {
            proxy = try startProxy(routes, workers: workers)
        }
    }

    var port: Int { proxy.port }
    var creationURL: String { proxy.url + "/files" }

    /// Stops FormGate and removes the store (unless `keepingStore`, for a FormGate started on
    /// it next).
    func stop(keepingStore: Bool = false) {
        proxy.stop()
        if !keepingStore { try? FileManager.default.removeItem(atPath: store) }
    }

    /// The access-log lines of deliveries (`POST /upload`), once `count` lines in all arrived.
    func deliveries(atLeast count: Int = 1) -> [[String: Any]] {
        proxy.accessLog(atLeast: count).filter { $0["path"] as? String == "/upload" }
    }

    /// The access-log lines of tus requests (those with a `tus` object).
    var tusLines: [[String: Any]] { proxy.accessLog.filter { $0["tus"] is [String: Any] } }
}

/// Checks a receipt against the source: byte-exact, one file, renamed by the route's
/// `{uuid}{ext}`, typed by `filetype`, `title` arriving as a form field.
func expectDelivered(
    _ receipt: TusReceipt, _ kind: TusUpstreamKind, bytes: [UInt8], ext: String, type: String, title: String,
    seed: UInt64, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(receipt.files == 1, "one file: \(receipt)", sourceLocation: sourceLocation)
    #expect(receipt.size == bytes.count, "\(receipt)", sourceLocation: sourceLocation)
    #expect(receipt.sha256 == Digest.hex(bytes), "byte-exact (seed \(seed))", sourceLocation: sourceLocation)
    let filename = receipt.filename ?? ""
    #expect(
        filename.hasSuffix(ext) && filename.count == 36 + ext.count
            && UUID(uuidString: String(filename.dropLast(ext.count))) != nil,
        "renamed by {uuid}{ext}: \(filename)", sourceLocation: sourceLocation)
    #expect(receipt.type == type, "the filetype metadata: \(receipt)", sourceLocation: sourceLocation)
    switch kind {
    case .php, .werkzeug:
        #expect(receipt.fields == ["title": title], "\(receipt)", sourceLocation: sourceLocation)
    case .qiniu:
        #expect(
            receipt.fieldNames == ["key", "title", "token"], "\(receipt)", sourceLocation: sourceLocation)
    }
}

/// Checks the delivery's access-log line: one POST to the deliver path, answered `status`,
/// whose file part is the upload renamed from `original`, `size` bytes.
func expectDeliveryLine(
    _ lines: [[String: Any]], status: Int = 200, original: String, size: Int,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(lines.count == 1, "exactly one delivery: \(lines)", sourceLocation: sourceLocation)
    // The last line: the delivery of the upload (after any that should not have been).
    guard let line = lines.last else { return }
    #expect(line["method"] as? String == "POST", sourceLocation: sourceLocation)
    #expect(line["status"] as? Int == status, "\(line)", sourceLocation: sourceLocation)
    let parts = line["parts"] as? [[String: Any]] ?? []
    let file = parts.first { $0["name"] as? String == "file" }
    #expect(file?["original_filename"] as? String == original, "\(parts)", sourceLocation: sourceLocation)
    #expect(file?["bytes"] as? Int == size, "\(parts)", sourceLocation: sourceLocation)
    #expect(
        parts.last?["name"] as? String == "file", "the file goes last: \(parts)",
        sourceLocation: sourceLocation)
}

/// `Upload-Metadata` for `pairs` (values base64, in order).
func tusMetadata(_ pairs: [(String, String)]) -> String {
    pairs.map { "\($0.0) \(Data($0.1.utf8).base64EncodedString())" }.joined(separator: ",")
}
