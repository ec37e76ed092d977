import HTTP1
import HTTPCore
import MultipartParsing
import ProxyCore
import Testing
import UploadRules

/// A keep-alive connection reads, builds and parses every head, and parses and re-encodes every
/// multipart body, in buffers kept from its earlier requests (`ActionBuffer.takeSpare`,
/// `MultipartBody.init(reusing:)`): a large request, then a small one, then a large one again
/// must each reach the upstream, and each response the client, with nothing of another's.
@Suite struct KeptBuffersTests {
    static func routes() -> RouteTable {
        var route = Route(pathPrefix: "/m", rewritesMultipart: true)
        route.rules.renameFields = ["a": "renamed"]
        return RouteTable([route])
    }

    /// A multipart request whose head has `extra` long fields and whose body has `parts`.
    static func request(boundary: String, extra: Int, parts: [(name: String, value: String)]) -> String {
        var body = ""
        for part in parts {
            body +=
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\"\r\n\r\n\(part.value)\r\n"
        }
        body += "--\(boundary)--\r\n"
        var head = "POST /m HTTP/1.1\r\nHost: t\r\n"
        for index in 0..<extra { head += "X-Extra-\(index): \(String(repeating: "v", count: 300))\r\n" }
        return head
            + "Content-Type: multipart/form-data; boundary=\(boundary)\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            + body
    }

    /// The parts the upstream got in one request (its head's boundary, its body, dechunked when
    /// it was sent chunked).
    static func parts(_ received: [UInt8]) throws -> (head: String, parts: [(String, String)]) {
        let body = messageBody(received)
        let head = String(decoding: received[..<(received.count - body.count)], as: UTF8.self)
        let boundary = try #require(head.split(separator: "boundary=").last?.prefix { !$0.isNewline })
        let payload = try #require(head.contains("Transfer-Encoding: chunked") ? dechunked(body) : body)
        var parser = try MultipartParser(boundary: Array(boundary.utf8))
        var parts: [(String, String)] = []
        var handler = ClosureEventHandler { event in
            switch event {
            case .partBegin(let part): parts.append((part.nameString, ""))
            case .body(let bytes): parts[parts.count - 1].1 += String(decoding: bytes, as: UTF8.self)
            default: break
            }
        }
        try parser.feed(payload, into: &handler)
        try parser.finish(into: &handler)
        return (head, parts)
    }

    @Test func largeSmallLargeRequestsKeepNothingOfEachOther() throws {
        let harness = Harness(routes: Self.routes(), highWater: 1 << 20)
        let requests = [
            Self.request(
                boundary: "first-boundary-0123456789", extra: 8,
                parts: [("a", "1"), ("b", String(repeating: "x", count: 3000))]),
            Self.request(boundary: "b2", extra: 0, parts: [("c", "22")]),
            Self.request(boundary: "third-boundary", extra: 3, parts: [("a", "333"), ("d", "4")]),
        ]
        let responses = [
            "HTTP/1.1 200 OK\r\nX-Long: \(String(repeating: "r", count: 500))\r\nContent-Length: 2\r\n\r\nok",
            "HTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\nnew",
            "HTTP/1.1 200 OK\r\nX-Other: 1\r\nContent-Length: 2\r\n\r\nok",
        ]
        let expected: [[(String, String)]] = [
            [("renamed", "1"), ("b", String(repeating: "x", count: 3000))], [("c", "22")],
            [("renamed", "333"), ("d", "4")],
        ]
        var upstreamStart = 0
        var clientStart = 0
        for (index, request) in requests.enumerated() {
            harness.serve(request, response: responses[index])
            let received = Array(harness.shell.upstreamReceived[upstreamStart...])
            upstreamStart = harness.shell.upstreamReceived.count
            let got = try Self.parts(received)
            #expect(got.parts.map(\.0) == expected[index].map(\.0), "request \(index)")
            #expect(got.parts.map(\.1) == expected[index].map(\.1), "request \(index)")
            #expect(
                got.head.occurrences(of: "X-Extra-") == [8, 0, 3][index], "request \(index): \(got.head)")
            #expect(
                got.head.occurrences(of: "\r\nHost: ") == 1 && got.head.occurrences(of: "X-Request-Id") == 1)
            let client = String(harness.shell.clientText.dropFirst(clientStart))
            clientStart = harness.shell.clientText.count
            #expect(client.occurrences(of: "X-Long") == (index == 0 ? 1 : 0), "response \(index): \(client)")
            #expect(client.occurrences(of: "X-Other") == (index == 2 ? 1 : 0), "response \(index): \(client)")
            #expect(client.hasSuffix(["ok", "new", "ok"][index]))
        }
        #expect(harness.statuses == [200, 201, 200])
    }

    /// What a body's rules read from its request (a header in a template, the part's name,
    /// file name and declared type, the request's boundary, quoted or not) is its own, though
    /// the objects and buffers they are read into were the connection's last request's.
    @Test func requestValuesAreEachRequestsOwn() throws {
        var route = Route(pathPrefix: "/m", rewritesMultipart: true)
        route.rules.inject = [
            Injection(name: "tag", position: .last, value: .template(try Template("{header:x-tag}")))
        ]
        route.rules.filename = try Template("{header:x-tag}-{original}")
        let harness = Harness(routes: RouteTable([route]), highWater: 1 << 20)
        let cases: [(tag: String, boundary: String, quoted: Bool, name: String, file: String, type: String)] =
            [
                (
                    "first-tag-0123456789", "boundary-number-one-0123456789", true, "upload",
                    "a-long-file-name.bin",
                    "application/octet-stream"
                ),
                ("t2", "b2", false, "f", "b.txt", "text/plain"),
                ("third", "three", true, "document-field-name", "c.pdf", "application/pdf"),
            ]
        var upstreamStart = 0
        var boundaries: Set<String> = []
        for (index, item) in cases.enumerated() {
            let body =
                "--\(item.boundary)\r\nContent-Disposition: form-data; name=\"\(item.name)\"; filename=\"\(item.file)\"\r\n"
                + "Content-Type: \(item.type)\r\n\r\ncontent \(index)\r\n--\(item.boundary)--\r\n"
            let type = item.quoted ? "\"\(item.boundary)\"" : item.boundary
            let request =
                "POST /m HTTP/1.1\r\nHost: t\r\nX-Tag: \(item.tag)\r\n"
                + "Content-Type: multipart/form-data; boundary=\(type)\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                + body
            harness.serve(request, response: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            let received = Array(harness.shell.upstreamReceived[upstreamStart...])
            upstreamStart = harness.shell.upstreamReceived.count
            let text = String(decoding: received, as: UTF8.self)
            let got = try Self.parts(received)
            #expect(got.parts.map(\.0) == [item.name, "tag"], "request \(index)")
            #expect(got.parts.map(\.1) == ["content \(index)", item.tag], "request \(index)")
            #expect(text.contains("filename=\"\(item.tag)-\(item.file)\""), "request \(index): \(text)")
            #expect(text.contains("Content-Type: \(item.type)\r\n"), "request \(index): \(text)")
            // The client's delimiter line (its boundary alone, `b2`, can occur in the new one's hex).
            #expect(
                !text.contains("--\(item.boundary)\r\n"),
                "request \(index): the client's boundary went upstream")
            boundaries.insert(
                String(got.head.split(separator: "boundary=").last?.prefix { !$0.isNewline } ?? ""))
        }
        #expect(boundaries.count == 3)
        #expect(harness.statuses == [200, 200, 200])
    }

    /// A head larger than `ActionBuffer.spareLimit` is not kept for the next request: an idle
    /// connection does not hold it.
    @Test func aLargeHeadIsNotKept() {
        let harness = Harness(routes: Self.routes(), highWater: 1 << 20)
        let small = Self.request(boundary: "b", extra: 1, parts: [("c", "1")])
        harness.serve(small, response: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(harness.actions.takeSpare(.request).capacityBytes > 0)
        let large = Self.request(boundary: "b", extra: 60, parts: [("c", "1")])
        harness.serve(large, response: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(harness.actions.takeSpare(.request).capacityBytes == 0)
        #expect(harness.statuses == [200, 200])
    }
}
