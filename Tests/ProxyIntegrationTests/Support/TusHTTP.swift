import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One response to a tus request: the status, the header fields (the last head, past any
/// `100 Continue`), the body.
struct TusResponse: CustomStringConvertible {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    /// The value of the field `name` (case-insensitive), the first when repeated.
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    var text: String { String(decoding: body, as: UTF8.self) }

    var description: String {
        "\(status) " + headers.map { "\($0.name): \($0.value)" }.joined(separator: "; ") + " | "
            + String(text.prefix(400))
    }

    /// The upload's path from `Location` (`http://HOST/files/<id>` → `/files/<id>`).
    var locationPath: String? {
        guard let location = header("Location"), let scheme = location.range(of: "://") else { return nil }
        let rest = location[scheme.upperBound...]
        return rest.firstIndex(of: "/").map { String(rest[$0...]) }
    }

    /// Reads responses as a client received them (`curl -i` output, or bytes off a socket):
    /// the last one after any 1xx heads.
    init(parsing bytes: [UInt8]) throws {
        var rest = bytes[...]
        while true {
            guard let end = rest.firstRange(of: Array("\r\n\r\n".utf8)) else {
                throw TestFailure("no response head in \(String(decoding: bytes.prefix(500), as: UTF8.self))")
            }
            let lines = String(decoding: rest[..<end.lowerBound], as: UTF8.self).components(
                separatedBy: "\r\n")
            status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
            headers = lines.dropFirst().compactMap { line in
                guard let colon = line.firstIndex(of: ":") else { return nil }
                return (
                    String(line[..<colon]),
                    line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                )
            }
            rest = rest[end.upperBound...]
            if !(100..<200).contains(status) { break }
        }
        body = Array(rest)
    }
}

/// tus requests over plain sockets (one connection each, `Connection: close`), for the tests
/// that need exact control of what is sent and when.
enum TusHTTP {
    /// Sends one request and reads its whole answer (`Tus-Resumable: 1.0.0` added, and a
    /// `Content-Length` for a POST or PATCH).
    static func send(
        port: Int, _ method: String, _ path: String, _ headers: [(String, String)] = [], body: [UInt8] = []
    ) throws -> TusResponse {
        let client = try RawClient(port: port)
        client.send(head(port: port, method, path, headers, bodyCount: body.count) + body)
        return try TusResponse(parsing: client.readAll(timeout: 120))
    }

    /// The request head `send` writes.
    static func head(
        port: Int, _ method: String, _ path: String, _ headers: [(String, String)], bodyCount: Int
    ) -> [UInt8] {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nTus-Resumable: 1.0.0\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if method == "POST" || method == "PATCH" { text += "Content-Length: \(bodyCount)\r\n" }
        text += "Connection: close\r\n\r\n"
        return Array(text.utf8)
    }

    /// Creates an upload of `length` bytes (201 expected) and returns its path.
    static func create(
        port: Int, length: Int, metadata: String, extra: [(String, String)] = []
    ) throws -> String {
        let response = try send(
            port: port, "POST", "/files",
            [("Upload-Length", String(length)), ("Upload-Metadata", metadata)] + extra)
        guard response.status == 201, let path = response.locationPath else {
            throw TestFailure("creation: \(response)")
        }
        return path
    }

    /// PATCHes `bytes` at `offset`.
    static func patch(port: Int, _ path: String, offset: Int, _ bytes: [UInt8]) throws -> TusResponse {
        try send(
            port: port, "PATCH", path,
            [("Upload-Offset", String(offset)), ("Content-Type", "application/offset+octet-stream")],
            body: bytes)
    }
}

/// Runs curl with `arguments` (after `-sS -i`) and reads its answer.
func curlTus(_ arguments: [String]) throws -> TusResponse {
    let result = try run(try tool("curl"), ["-sS", "-i"] + arguments)
    guard result.status == 0 else {
        throw TestFailure(
            "curl \(arguments) failed (\(result.status)): \(String(decoding: result.output, as: UTF8.self))")
    }
    return try TusResponse(parsing: Array(result.output))
}

/// A loopback port nothing listens on now: bound to port 0, read, closed (a `FakeUpstream` as a
/// probe would leave its accept thread racing its release).
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw TestFailure("bind: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}
