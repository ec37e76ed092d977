import Foundation
import Testing

/// What the recorder received, case by case (the script sends each case's requests to
/// `/upload?case=NAME`).
extension HTTP2HostileTests {
    /// Once every partial request's connection is closed (the proxy aborted it), each case's
    /// requests are held to its expectation; a request of no case is a failure.
    static func checkUpstream(
        _ setup: HTTP2RecorderSetup, _ results: [String: [String: Any]],
        _ pinned: [String: HostileExpectation]
    ) {
        let settled = eventually {
            UpstreamRecord.all(setup.recorder).allSatisfy { $0.request != nil || $0.connectionClosed }
        }
        let records = UpstreamRecord.all(setup.recorder)
        #expect(
            settled,
            "partial requests still open upstream: \(records.filter { $0.request == nil && !$0.connectionClosed }.map(\.requestLine))"
        )
        let strays = records.filter { record in
            record.caseName.map { pinned[$0] == nil && $0 != "warm-up" } ?? true
        }
        #expect(strays.isEmpty, "requests upstream of no case: \(strays.map(\.requestLine))")
        let byCase = Dictionary(grouping: records) { $0.caseName ?? "" }
        let host = "127.0.0.1:\(setup.recorder.port)"
        for (name, expectation) in pinned.sorted(by: { $0.key < $1.key }) {
            let file = results[name]?["file"] as? [String: Any]
            checkReceived(name, byCase[name] ?? [], expectation, file: file, host: host)
        }
    }

    /// One case's requests: the whole ones by method as pinned (cancelled GETs aside), partial
    /// ones only where allowed, and each whole one exactly the re-framed request.
    static func checkReceived(
        _ name: String, _ received: [UpstreamRecord], _ expectation: HostileExpectation, file: [String: Any]?,
        host: String
    ) {
        let whole = received.filter { $0.request != nil }
        let partial = received.filter { $0.request == nil }
        var extra = Dictionary(whole.map { ($0.method, 1) }, uniquingKeysWith: +)
        for method in expectation.whole { extra[method, default: 0] -= 1 }
        for method in expectation.maybe where extra[method, default: 0] > 0 { extra[method, default: 0] -= 1 }
        let cancelled = extra.removeValue(forKey: "GET") ?? 0
        #expect(
            extra.values.allSatisfy { $0 == 0 } && (0...expectation.cancelled).contains(cancelled),
            "\(name): the upstream got whole \(whole.map(\.method)), pinned \(expectation.whole)")
        #expect(
            expectation.partial || partial.isEmpty,
            "\(name): the upstream got \(partial.count) partial request(s) (\(partial[0].requestLine)), pinned none"
        )
        for request in whole.compactMap(\.request) {
            checkReframed(name, request, file: file, host: host)
        }
    }

    /// A whole request as FormGate re-frames the case's request: the request line, exactly
    /// the fields it sets (the client's Upgrade, HTTP2-Settings, Connection, te and trailers
    /// not among them), and for a POST the body re-encoded under FormGate's boundary: the
    /// injected field first, then the client's field and file part, the file's bytes intact.
    static func checkReframed(_ name: String, _ request: RecordedRequest, file: [String: Any]?, host: String)
    {
        let method = String(request.requestLine.prefix { $0 != " " })
        #expect(
            request.requestLine == "\(method) /upload?case=\(name) HTTP/1.1",
            "\(name): \(request.requestLine)")
        let forwarded = ["X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Request-Id"]
        let names = request.fields.map(\.name)
        let values = [
            request.values("Host"), request.values("X-Forwarded-For"), request.values("X-Forwarded-Proto"),
        ]
        #expect(values == [[host], ["127.0.0.1"], ["http"]], "\(name): \(request.fields)")
        #expect(request.values("X-Forwarded-Host") == ["127.0.0.1"], "\(name): \(request.fields)")
        #expect(
            request.values("X-Request-Id").first?.allSatisfy(\.isHexDigit) == true
                && request.values("X-Request-Id").first?.count == 32, "\(name): \(request.fields)")
        guard method == "POST" else {
            #expect(names == ["Host"] + forwarded && request.body.isEmpty, "\(name): \(names)")
            return
        }
        let framing = names.last ?? ""
        #expect(
            names == ["Host", "Content-Type"] + forwarded + [framing]
                && (request.values(framing) == ["chunked"]
                    || request.values(framing) == [String(request.body.count)]),
            "\(name): \(request.fields)")
        checkReframedBody(name, request, file: file)
    }

    static func checkReframedBody(_ name: String, _ request: RecordedRequest, file: [String: Any]?) {
        let type = request.values("Content-Type").first ?? ""
        let prefix = "multipart/form-data; boundary="
        let boundary = String(type.dropFirst(prefix.count))
        #expect(
            type.hasPrefix(prefix) && !boundary.isEmpty && !boundary.contains("h2hostile"), "\(name): \(type)"
        )
        guard let count = file?["bytes"] as? Int, let sha256 = file?["sha256"] as? String else {
            Issue.record("\(name): a whole POST upstream, but the case reported no file")
            return
        }
        let delimiter = "--\(boundary)\r\nContent-Disposition: form-data; name="
        let head = Array(
            (delimiter + "\"via\"\r\n\r\nh2\r\n" + delimiter + "\"title\"\r\n\r\nhostile\r\n" + delimiter
                + "\"upload\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\n").utf8)
        let tail = Array("\r\n--\(boundary)--\r\n".utf8)
        let body = request.body
        let shaped =
            body.count == head.count + count + tail.count && body.starts(with: head)
            && Array(body.suffix(tail.count)) == tail
        #expect(
            shaped,
            "\(name): the body is not the re-framed one: \(String(decoding: body.prefix(600), as: UTF8.self))"
        )
        if shaped {
            #expect(
                Digest.hex(Array(body[head.count..<head.count + count])) == sha256,
                "\(name): file bytes changed")
        }
    }
}
