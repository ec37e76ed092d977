import Foundation
import Testing

/// Real captures with part headers RFC 7578 does not allow, an unparsable part Content-Type
/// and a comma-separated request Content-Type, through FormGate to PHP (`$_POST`/`$_FILES`),
/// Werkzeug and Node's `Request.formData()`, and to a raw upstream that shows the exact bytes:
/// a canonical RFC 7578 body. The captures are `Tests/Fixtures/corpus` copies (source and
/// licence in its README).
@Suite(.serialized) struct CanonicalPartsTests {
    struct Capture: CustomTestStringConvertible, Sendable {
        var file: String
        /// The request's Content-Type, as the client wrote it.
        var contentType: String
        /// The canonical body the upstream must get, with `{B}` for FormGate's boundary.
        var canonical: [UInt8]
        var fields: [String: String]
        /// field -> (filename, type essence, size, sha256)
        var files: [String: FileSeen]
        var anomalies: Set<String>
        var testDescription: String { file }
    }

    struct FileSeen: Equatable, Sendable, CustomStringConvertible {
        var filename: String
        var type: String
        var size: Int
        var sha256: String
        var description: String { "\(filename) \(type) \(size) \(sha256)" }
    }

    static let corpus = packageRoot.appendingPathComponent("Tests/Fixtures/corpus")
    static let conformance = packageRoot.appendingPathComponent("Tests/Conformance")

    static func bytes(_ relative: String) -> [UInt8] {
        [UInt8]((try? Data(contentsOf: corpus.appendingPathComponent(relative))) ?? Data())
    }

    static let nestedPart = String(decoding: bytes("dicer/nested/part2"), as: UTF8.self)

    static let captures: [Capture] = [
        Capture(
            file: "python-multipart/header_with_number.http",
            contentType: "multipart/form-data; boundary=b8825ae386be4fdc9644d87e392caad3",
            canonical: Array(
                ("--{B}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"secret.txt\"\r\n"
                    + "Content-Type: text/plain; charset=utf-8\r\n\r\naaaaaa\r\n--{B}--\r\n").utf8),
            fields: [:],
            files: [
                "files": FileSeen(
                    filename: "secret.txt", type: "text/plain", size: 6,
                    sha256: Digest.hex(Array("aaaaaa".utf8)))
            ],
            anomalies: ["extra_part_header", "missing_final_line_break"]),
        Capture(
            file: "busboy/26-empty-part.body",
            contentType: "multipart/form-data; boundary=d1bf46b3-aa33-4061-b28d-6c5ced8b08ee",
            canonical: Array(
                ("--{B}\r\nContent-Disposition: form-data; name=\"batch-1\"; filename=\"batch-1\"\r\n"
                    + "Content-Type: application/gzip\r\n\r\n\r\n--{B}--\r\n").utf8),
            fields: [:],
            files: [
                "batch-1": FileSeen(
                    filename: "batch-1", type: "application/gzip", size: 0, sha256: Digest.hex([]))
            ],
            anomalies: ["data_before", "unquoted_parameter", "extra_part_header", "missing_final_line_break"]),
        Capture(
            file: "dicer/nested/original",
            contentType: "multipart/form-data, boundary=AaB03x",
            canonical: Array(
                ("--{B}\r\nContent-Disposition: form-data; name=\"foo\"\r\n\r\nbar\r\n"
                    + "--{B}\r\nContent-Disposition: form-data; name=\"files\"\r\n"
                    + "Content-Type: application/octet-stream\r\n\r\n" + nestedPart + "\r\n--{B}--\r\n").utf8),
            fields: ["foo": "bar", "files": nestedPart], files: [:],
            anomalies: [
                "comma_separated_parameters", "invalid_part_content_type", "missing_final_line_break",
            ]),
    ]

    /// Sends `body` with `contentType` to `path` on a connection of its own (closed after the
    /// answer, so a response without a length ends) and returns the response, de-chunked.
    func post(_ proxy: ServerProcess, _ path: String, _ contentType: String, _ body: [UInt8]) throws -> (
        status: Int, head: String, body: [UInt8]
    ) {
        let client = try RawClient(port: proxy.port)
        // Head and body in one write: a head read alone makes the exchange connect the
        // upstream and send it the head before the body is seen (a request the upstream never
        // gets whole), which the strict route's "nothing upstream" check would count.
        client.send(
            Array(
                ("POST \(path) HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Type: \(contentType)\r\n"
                    + "Content-Length: \(body.count)\r\n\r\n").utf8) + body)
        let response = try #require(client.readResponse())
        // Framing read the same way as a forwarded request's (chunks undone).
        let body = ForwardedRequest(Array((response.head + "\r\n\r\n").utf8) + response.body).body
        return (response.status, response.head, body)
    }

    /// What a server reported, in one shape: fields, and files by field name.
    func seen(_ server: String, _ data: [UInt8]) throws -> (
        fields: [String: String], files: [String: FileSeen]
    ) {
        let object = try jsonObject(Data(data))
        let fields: [String: String]
        let files: [[String: Any]]
        if server == "php" {
            fields = object["post"] as? [String: String] ?? [:]
            files = (object["files"] as? [[String: Any]] ?? []).map { file in
                var renamed = file
                renamed["filename"] = file["name"]
                return renamed
            }
        } else {
            fields = object["fields"] as? [String: String] ?? [:]
            files = object["files"] as? [[String: Any]] ?? []
        }
        var byField: [String: FileSeen] = [:]
        for file in files {
            let type = (file["type"] as? String ?? "").split(separator: ";").first.map {
                $0.trimmingCharacters(in: .whitespaces).lowercased()
            }
            byField[file["field"] as? String ?? "?"] = FileSeen(
                filename: file["filename"] as? String ?? "?", type: type ?? "",
                size: file["size"] as? Int ?? -1,
                sha256: file["sha256"] as? String ?? "?")
        }
        return (fields, byField)
    }

    @Test(arguments: captures)
    func captureReachesEveryServerCanonically(_ capture: Capture) throws {
        let (php, phpPort) = try startPHP()
        defer { php.stop() }
        let werkzeug = try ServerProcess(
            try tool("python3"), [Self.conformance.appendingPathComponent("werkzeug_server.py").path])
        defer { werkzeug.stop() }
        let node = try ServerProcess(
            try tool("node"), [Self.conformance.appendingPathComponent("node_server.mjs").path])
        defer { node.stop() }
        let raw = try FakeUpstream(.respond("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        defer { raw.stop() }
        var yaml = "upstream: \(raw.url)\nroutes:\n"
        for (name, port, mode) in [
            ("php", phpPort, "buffer"), ("werkzeug", werkzeug.port, "stream"), ("node", node.port, "stream"),
            ("raw", raw.port, "buffer"),
        ] {
            yaml +=
                "  - { name: \(name), match: { path: /\(name) }, upstream: \"http://127.0.0.1:\(port)\", request_body: \(mode), multipart: {} }\n"
        }
        let proxy = try startProxy(yaml)
        defer { proxy.stop() }
        let body = Self.bytes(capture.file)
        try #require(!body.isEmpty, "fixture \(capture.file) is missing")

        for server in ["php", "werkzeug", "node"] {
            let response = try post(proxy, "/\(server)/upload", capture.contentType, body)
            #expect(response.status == 200, "\(server): \(String(decoding: response.body, as: UTF8.self))")
            guard response.status == 200 else { continue }
            let (fields, files) = try seen(server, response.body)
            #expect(fields == capture.fields, "\(server) fields")
            #expect(files == capture.files, "\(server) files")
        }

        let response = try post(proxy, "/raw/upload", capture.contentType, body)
        #expect(response.status == 200)
        let request = try raw.request(after: 0)
        let boundary = try #require(ForwardedRequest(raw.bytesReceived).boundary, "no forwarded boundary")
        #expect(request.values("Content-Type") == ["multipart/form-data; boundary=\(boundary)"])
        let expected = String(decoding: capture.canonical, as: UTF8.self)
            .replacingOccurrences(of: "{B}", with: boundary)
        #expect(String(decoding: request.body, as: UTF8.self) == expected)
        #expect(request.body == Array(expected.utf8))

        let log = proxy.accessLog(atLeast: 4)
        try #require(log.count == 4)
        for line in log {
            #expect(Set(line["anomalies"] as? [String] ?? []) == capture.anomalies)
        }
        if capture.file.hasPrefix("dicer") {
            let parts = try #require(log.last?["parts"] as? [[String: Any]])
            #expect(parts.last?["declared_type"] as? String == "multipart/mixed, boundary=BbC04y")
            #expect(parts.last?["content_type"] as? String == "application/octet-stream")
        }
    }

    /// `reject` answers 400 naming the flag, logs it, and the upstream never gets a body.
    @Test func strictRouteRefusesWithTheFlagsName() throws {
        let raw = try FakeUpstream(.silent)
        defer { raw.stop() }
        let proxy = try startProxy(
            """
            upstream: \(raw.url)
            routes:
              - match: { path: /strict }
                multipart: { anomalies: { extra_part_header: reject, comma_separated_parameters: reject } }

            """)
        defer { proxy.stop() }
        let numbered = Self.captures[0]
        let refused = try post(proxy, "/strict", numbered.contentType, Self.bytes(numbered.file))
        #expect(refused.status == 400)
        #expect(String(decoding: refused.body, as: UTF8.self).contains("extra_part_header"))
        let nested = Self.captures[2]
        let comma = try post(proxy, "/strict", nested.contentType, Self.bytes(nested.file))
        #expect(comma.status == 400)
        #expect(
            String(decoding: comma.body, as: UTF8.self).contains(
                "multipart anomaly refused by the route's policy: comma_separated_parameters"))
        let log = proxy.accessLog(atLeast: 2)
        try #require(log.count == 2)
        #expect((log[0]["error"] as? String)?.contains("extra_part_header") == true)
        #expect((log[1]["error"] as? String)?.contains("comma_separated_parameters") == true)
        #expect((log[0]["anomalies"] as? [String])?.contains("extra_part_header") == true)
        // Both were refused before any byte went upstream.
        #expect(raw.bytesReceived.isEmpty)
    }

    /// A flag found after the closing delimiter (`data_after`) still refuses the request, and
    /// the upstream, which already streams the part, never gets the closing delimiter.
    @Test func lateFlagAbandonsTheUpstreamBeforeItsCloseDelimiter() throws {
        let raw = try FakeUpstream(.silent)
        defer { raw.stop() }
        let proxy = try startProxy(
            """
            upstream: \(raw.url)
            routes:
              - match: { path: /late }
                request_body: stream
                multipart: { anomalies: { data_after: reject } }

            """)
        defer { proxy.stop() }
        let body = Array(
            "--b0undary\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n\r\nSTREAMED-CONTENT\r\n--b0undary--\r\n"
                .utf8)
        let epilogue = Array("trailing epilogue".utf8)
        let client = try RawClient(port: proxy.port)
        client.send(
            "POST /late HTTP/1.1\r\nHost: test\r\nContent-Type: multipart/form-data; boundary=b0undary\r\n"
                + "Content-Length: \(body.count + epilogue.count)\r\n\r\n")
        client.send(body)
        // Wait until the part's content reached the upstream: the body is being streamed.
        eventually { raw.bytesReceived.firstRange(of: Array("STREAMED-CONTENT".utf8)) != nil }
        let streamed = raw.bytesReceived
        try #require(streamed.firstRange(of: Array("STREAMED-CONTENT".utf8)) != nil, "nothing was streamed")
        client.send(epilogue)
        let response = try #require(client.readResponse())
        #expect(response.status == 400)
        #expect(String(decoding: response.body, as: UTF8.self).contains("data_after"))
        #expect((proxy.accessLog(atLeast: 1).first?["error"] as? String)?.contains("data_after") == true)
        let received = String(decoding: raw.bytesReceived, as: UTF8.self)
        let boundary = try #require(
            received.components(separatedBy: "boundary=").dropFirst().first?.prefix { !$0.isWhitespace })
        #expect(!received.contains("--\(boundary)--"), "the upstream got the closing delimiter")
        #expect(!received.contains("\r\n0\r\n\r\n"), "the upstream got the last chunk")
    }
}
