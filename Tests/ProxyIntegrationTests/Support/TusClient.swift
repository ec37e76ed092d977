import CCrypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One answer of a tus route, as `RawClient` read it.
struct TusReply: CustomStringConvertible {
    let status: Int
    let head: String
    let body: [UInt8]

    /// The value of the first field called `name` (ignoring case).
    func header(_ name: String) -> String? {
        for line in head.components(separatedBy: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == name.lowercased() {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// `Upload-Offset`, parsed.
    var offset: Int64? { header("Upload-Offset").flatMap { Int64($0) } }

    /// The upload id at the end of `Location`.
    var id: String? { header("Location").map { String($0.split(separator: "/").last ?? "") } }

    var text: String { String(decoding: body, as: UTF8.self) }

    var description: String { "\(head)\n\n\(text.prefix(400))" }
}

/// A tus 1.0.0 client on raw sockets: one request per connection (`Connection: close`), the
/// exact bytes a test means, and bodies streamed from a file without a copy in memory.
struct TusClient {
    let port: Int
    /// Sent as `X-Api-Key` when set.
    var apiKey: String?
    /// The creation URL.
    var prefix = "/files"

    /// The request head: `Tus-Resumable` unless `resumable` is nil, then `fields`.
    func head(
        _ method: String, _ target: String, _ fields: [(String, String)], resumable: String?,
        contentLength: Int64?
    ) -> [UInt8] {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let apiKey { text += "X-Api-Key: \(apiKey)\r\n" }
        if let resumable { text += "Tus-Resumable: \(resumable)\r\n" }
        for (name, value) in fields { text += "\(name): \(value)\r\n" }
        if let contentLength { text += "Content-Length: \(contentLength)\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// Sends one request and reads its answer (`target` is sent byte for byte).
    func send(
        _ method: String, _ target: String, _ fields: [(String, String)] = [], body: [UInt8] = [],
        resumable: String? = "1.0.0", timeout: Int = 30
    ) throws -> TusReply {
        let client = try connect()
        let length: Int64? = method == "HEAD" || method == "DELETE" ? nil : Int64(body.count)
        (head(method, target, fields, resumable: resumable, contentLength: length) + body).withUnsafeBytes {
            _ = sendCounting(client, $0)
        }
        return try Self.response(client, "\(method) \(target)", timeout: timeout)
    }

    /// A connection whose writes give up after 120 s (a server that stopped reading).
    func connect() throws -> RawClient {
        let client = try RawClient(port: port)
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(client.fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        return client
    }

    static func response(_ client: RawClient, _ label: String, timeout: Int = 30) throws -> TusReply {
        guard let answer = client.readResponse(timeout: timeout) else {
            throw TestFailure("\(label): no response")
        }
        return TusReply(status: answer.status, head: answer.head, body: answer.body)
    }

    /// `POST` to the creation URL.
    func create(
        length: Int64?, metadata: [(String, String)] = [], fields: [(String, String)] = []
    ) throws -> TusReply {
        var all = fields
        if let length {
            all.append(("Upload-Length", String(length)))
        } else {
            all.append(("Upload-Defer-Length", "1"))
        }
        if !metadata.isEmpty { all.append(("Upload-Metadata", Self.metadata(metadata))) }
        return try send("POST", prefix, all)
    }

    /// Creates an upload and returns its id (fails the test with the answer otherwise).
    func createID(length: Int64?, metadata: [(String, String)] = []) throws -> String {
        let created = try create(length: length, metadata: metadata)
        guard created.status == 201, let id = created.id, id.count == 32 else {
            throw TestFailure("creation: \(created)")
        }
        return id
    }

    func headOf(_ id: String, timeout: Int = 30) throws -> TusReply {
        try send("HEAD", "\(prefix)/\(id)", timeout: timeout)
    }

    /// `PATCH` of `bytes` at `offset`.
    func patch(
        _ id: String, offset: Int64, _ bytes: [UInt8], fields: [(String, String)] = [], timeout: Int = 30
    ) throws -> TusReply {
        try send(
            "PATCH", "\(prefix)/\(id)",
            [("Content-Type", "application/offset+octet-stream"), ("Upload-Offset", String(offset))] + fields,
            body: bytes, timeout: timeout)
    }

    /// Opens a connection and sends the head of a PATCH whose body is `contentLength` bytes;
    /// the caller streams the body (`stream`) and reads the answer or cuts the connection.
    func openPatch(_ id: String, offset: Int64, contentLength: Int64) throws -> RawClient {
        let client = try connect()
        client.send(
            head(
                "PATCH", "\(prefix)/\(id)",
                [("Content-Type", "application/offset+octet-stream"), ("Upload-Offset", String(offset))],
                resumable: "1.0.0", contentLength: contentLength))
        return client
    }

    /// `Upload-Metadata`: keys with Base64 values.
    static func metadata(_ pairs: [(String, String)]) -> String {
        pairs.map { "\($0.0) \(Data($0.1.utf8).base64EncodedString())" }.joined(separator: ",")
    }

    /// `Upload-Checksum` of `bytes` with `algorithm` (sha1, sha256, md5).
    static func checksum(_ algorithm: String, _ bytes: [UInt8]) -> String {
        let md: OpaquePointer? =
            switch algorithm {
            case "sha1": EVP_sha1()
            case "md5": EVP_md5()
            default: EVP_sha256()
            }
        var digest = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        let context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, md, nil)
        bytes.withUnsafeBytes { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
        EVP_DigestFinal_ex(context, &digest, &length)
        EVP_MD_CTX_free(context)
        return "\(algorithm) \(Data(digest.prefix(Int(length))).base64EncodedString())"
    }
}

/// Writes all of `bytes` to `client`; the count written (less when the peer stopped taking
/// them, or the 120 s send timeout passed).
@discardableResult
func sendCounting(_ client: RawClient, _ bytes: UnsafeRawBufferPointer) -> Int {
    var offset = 0
    while offset < bytes.count {
        let sent = Glibc.send(
            client.fd, bytes.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
        if sent < 0, errno == EINTR { continue }
        if sent <= 0 { return offset }
        offset += sent
    }
    return offset
}

/// A file of seeded bytes (`SeededRandom`), written once, read back in ranges: a large upload
/// that the test process never holds whole.
final class SeededFile {
    let path: String
    let size: Int64
    let seed: UInt64
    /// SHA-256 of the whole file.
    let sha256: String
    private let fd: Int32

    init(size: Int64, seed: UInt64) throws {
        self.size = size
        self.seed = seed
        path = NSTemporaryDirectory() + "formgate-tus-data-\(UUID().uuidString)"
        let out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard out >= 0 else { throw TestFailure("cannot create \(path): errno \(errno)") }
        defer { close(out) }
        var generator = SeededRandom(seed: seed)
        let digest = Digest()
        var words = [UInt64](repeating: 0, count: 1 << 17)
        var written: Int64 = 0
        while written < size {
            for index in words.indices { words[index] = generator.next().littleEndian }
            let count = Int(min(Int64(1 << 20), size - written))
            let chunk = words.withUnsafeBytes { Array($0.prefix(count)) }
            digest.update(chunk)
            guard chunk.withUnsafeBytes({ write(out, $0.baseAddress, count) }) == count else {
                throw TestFailure("cannot write \(path): errno \(errno)")
            }
            written += Int64(count)
        }
        sha256 = digest.hex()
        fd = open(path, O_RDONLY | O_CLOEXEC)
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// `count` bytes at `offset`.
    func read(at offset: Int64, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, count, off_t(offset)) }
        return Array(bytes.prefix(max(0, got)))
    }

    /// Streams `count` bytes from `offset` to `client` in 1 MiB writes; the bytes it took.
    @discardableResult
    func stream(to client: RawClient, from offset: Int64, count: Int64) -> Int64 {
        var sent: Int64 = 0
        while sent < count {
            let chunk = read(at: offset + sent, count: Int(min(Int64(1 << 20), count - sent)))
            let taken = chunk.withUnsafeBytes { sendCounting(client, $0) }
            sent += Int64(taken)
            if taken < chunk.count || chunk.isEmpty { break }
        }
        return sent
    }

    /// SHA-256 of the first `count` bytes.
    func sha256(prefix count: Int64) -> String { sha256OfFile(path, prefix: count) }
}

/// SHA-256 of the first `count` bytes of the file at `path` (fewer if it is shorter).
func sha256OfFile(_ path: String, prefix count: Int64) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    defer { close(fd) }
    let digest = Digest()
    var buffer = [UInt8](repeating: 0, count: 1 << 20)
    var done: Int64 = 0
    while done < count {
        let want = Int(min(Int64(buffer.count), count - done))
        let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, want, off_t(done)) }
        if got <= 0 { break }
        digest.update(Array(buffer.prefix(got)))
        done += Int64(got)
    }
    return digest.hex()
}

/// A test's temporary directory holding the tus store (`<dir>/store`), so that a path that
/// escaped the store would show up beside it.
final class TusStoreDirectory {
    let parent: String
    let store: String

    init() throws {
        parent = NSTemporaryDirectory() + "formgate-tus-\(UUID().uuidString)"
        store = parent + "/store"
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: parent) }

    /// The store's file names, sorted (none when it does not exist yet).
    var files: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []).sorted() }

    /// Every path under the parent directory, relative to it, sorted.
    var tree: [String] {
        (FileManager.default.subpaths(atPath: parent) ?? []).sorted()
    }

    /// Store file names that are not `<32 lowercase hex>.info|.bin|.answer`, or a `.bin` or
    /// `.answer` without its upload's `.info` (an orphan nothing would ever remove).
    var strayFiles: [String] {
        let names = files
        let records = Set(names.filter { $0.hasSuffix(".info") }.map { $0.prefix(32) })
        return names.filter { !Self.isUploadFile($0) || !records.contains($0.prefix(32)) }
    }

    static func isUploadFile(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, ["info", "bin", "answer"].contains(parts[1]) else { return false }
        let hex = parts[0].utf8
        return hex.count == 32 && hex.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// The size of `<id>.bin` (-1 when missing).
    func binSize(_ id: String) -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: "\(store)/\(id).bin")
        return (attributes?[.size] as? NSNumber)?.int64Value ?? -1
    }
}

/// The config of a tus route `/files` delivering to `upstream` at `/upload` (`file`, with the
/// `title` field), with `extra` lines indented under the route (auth, multipart).
/// `site` is the default upstream (the rest of the site, where paths outside `/files` go).
func tusConfig(
    upstream: String, store: String, maxSize: String = "1GiB", expireAfter: String = "1h", extra: String = "",
    site: String? = nil
) -> String {
    """
    upstream: \(site ?? upstream)
    routes:
      - name: resumable
        match: { path: /files }
        upstream: \(upstream)
        tus:
          store: \(store)
          max_size: \(maxSize)
          expire_after: \(expireAfter)
          deliver: { path: /upload, file_field: file, fields: [title] }
    \(extra)

    """
}

/// A key file for `auth: { api_keys: ... }` with alice and bob.
func tusKeyFile(in directory: String) throws -> String {
    let path = directory + "/api-keys.txt"
    try "alice: \(Digest.hex(Array(tusAliceKey.utf8)))\nbob: \(Digest.hex(Array(tusBobKey.utf8)))\n"
        .write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

let tusAliceKey = "key-alice-0123456789"
let tusBobKey = "key-bob-0123456789"

/// The access log's lines for `path` (the delivery's POSTs when it is the deliver path).
func logLines(_ proxy: ServerProcess, path: String) -> [[String: Any]] {
    proxy.accessLog.filter { $0["path"] as? String == path }
}

/// The `tus` object of an access-log line.
func tusObject(_ line: [String: Any]) -> [String: Any]? { line["tus"] as? [String: Any] }

/// The whole requests a recording upstream received (the deliveries).
func deliveries(_ upstream: FakeUpstream) -> [RecordedRequest] {
    UpstreamRecord.all(upstream).compactMap(\.request)
}

/// The parts of a multipart body: each part's `name`, `filename` and bytes.
func multipartParts(_ request: RecordedRequest) -> [(name: String, filename: String?, bytes: [UInt8])] {
    guard let type = request.values("Content-Type").first, let range = type.range(of: "boundary=") else {
        return []
    }
    let boundary = Array(("\r\n--" + type[range.upperBound...].prefix { $0 != ";" }).utf8)
    var body = [UInt8]("\r\n".utf8) + request.body
    var parts: [(String, String?, [UInt8])] = []
    while let start = body.firstRange(of: boundary) {
        body.removeSubrange(..<start.upperBound)
        guard body.starts(with: Array("\r\n".utf8)), let headEnd = body.firstRange(of: Array("\r\n\r\n".utf8))
        else { break }
        let head = String(decoding: body[..<headEnd.lowerBound], as: UTF8.self)
        guard let end = body.firstRange(of: boundary) else { break }
        let content = Array(body[headEnd.upperBound..<end.lowerBound])
        func parameter(_ key: String) -> String? {
            guard let found = head.range(of: "; \(key)=\"") else { return nil }
            return String(head[found.upperBound...].prefix { $0 != "\"" })
        }
        parts.append((parameter("name") ?? "", parameter("filename"), content))
        body.removeSubrange(..<end.lowerBound)
    }
    return parts.map { (name: $0.0, filename: $0.1, bytes: $0.2) }
}

/// A recording upstream that answers each whole request 200 with a small JSON body.
func recordingUpstream() throws -> FakeUpstream {
    try FakeUpstream(
        .answer(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"stored\":true}"
        ))
}
