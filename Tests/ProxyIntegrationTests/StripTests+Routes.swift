import Foundation
import Testing

/// `strip_metadata` over HTTP/2, on a route that configures no `sniff`, and what
/// `formgate check` accepts.
extension StripTests {
    /// The same JPEGs over HTTP/1.1 and HTTP/2 (h2c, prior knowledge) reach the upstream as
    /// the same stripped bytes.
    @Test func anHTTP2UploadIsStrippedTheSameWay() throws {
        let fixtures = try StripFixtures()
        let upstream = try recordingUpstream()
        defer { upstream.stop() }
        let proxy = try startListeners(
            ["{ address: 127.0.0.1:0, http2: { h2c: true } }"],
            """
            upstream: \(upstream.url)
            routes:
              - match: { path: /upload }
                multipart:
                  sniff: { content_type: keep }
                  digest: { algorithms: [sha256] }
                  strip_metadata: { formats: [jpeg], mode: blank }

            """)
        defer { proxy.stop() }
        let parts = ["photo.jpg", "large.jpg"].enumerated().map {
            (field: "img\($0.offset)", path: fixtures.path($0.element), type: String?.none)
        }
        let overHTTP1 = try curlUpload(proxy.url + "/upload", parts)
        #expect(overHTTP1.status == 200, "\(overHTTP1.body)")
        let overHTTP2 = try curlUpload(proxy.url + "/upload", parts, http2: true)
        #expect(overHTTP2.status == 200, "\(overHTTP2.body)")
        let (requests, exact) = receivedRequests(upstream, count: 2)
        #expect(exact)
        try #require(requests.count == 2)
        let lines = proxy.accessLog(atLeast: 2)
        #expect(lines.map { $0["protocol"] as? String } == ["http/1.1", "h2"], "\(lines)")
        let first = partsByName(requests[0])
        let second = partsByName(requests[1])
        for (index, file) in ["photo.jpg", "large.jpg"].enumerated() {
            let name = "img\(index)"
            #expect(endsAtItsClosingDelimiter(requests[1]))
            try Self.judge(fixtures, file, received: second[name]?.bytes, blank: true, label: "h2")
            #expect(
                sha256Hex(second[name]?.bytes) == sha256Hex(first[name]?.bytes),
                "\(file): HTTP/2 stripped it differently")
            #expect(
                second["\(name).sha256"].map { String(decoding: $0.bytes, as: UTF8.self) }
                    == Digest.hex(second[name]?.bytes ?? []), "\(file): digest")
            let stripped = strippedKinds(loggedParts(lines.last)[name])
            #expect(stripped == StripFixtures.expectedStripped(file), "\(file): \(stripped)")
        }
    }

    /// A route with `strip_metadata` and no `sniff` sniffs anyway (as `content_type: keep`):
    /// the format is always the sniffed one, and the declared type goes on unchanged.
    @Test func aRouteWithoutSniffStillSniffsAndStrips() throws {
        let fixtures = try StripFixtures()
        let upstream = try recordingUpstream()
        defer { upstream.stop() }
        let proxy = try Self.proxy(upstream, "", "strip_metadata: true")
        defer { proxy.stop() }
        let files = ["photo.jpg", "text.png", "meta.webp"]
        let answer = try curlUpload(
            proxy.url + "/upload",
            files.enumerated().map {
                (field: "img\($0.offset)", path: fixtures.path($0.element), type: "text/plain")
            })
        #expect(answer.status == 200, "\(answer.body)")
        let request = try #require(receivedRequests(upstream, count: 1).requests.first)
        let received = partsByName(request)
        let logged = loggedParts(proxy.accessLog(atLeast: 1).first)
        for (index, file) in files.enumerated() {
            try Self.judge(
                fixtures, file, received: received["img\(index)"]?.bytes, blank: true, label: "nosniff")
            let stripped = strippedKinds(logged["img\(index)"])
            #expect(stripped.isSuperset(of: StripFixtures.expectedStripped(file)), "\(file): \(stripped)")
            #expect(
                logged["img\(index)"]?["content_type"] as? String == "text/plain", "\(file): type changed")
        }
    }

    /// `formgate check` refuses `mode: remove` on a stream route (a shorter file cannot keep a
    /// length declared from the client's) and accepts it on a buffer route.
    @Test func checkRefusesRemoveModeOnAStreamRoute() throws {
        func check(_ route: String) throws -> ImageJudge.Result {
            let path = NSTemporaryDirectory() + "formgate-strip-check-\(UUID().uuidString).yaml"
            defer { try? FileManager.default.removeItem(atPath: path) }
            try """
            listen: 127.0.0.1:0
            upstream: http://127.0.0.1:9
            routes:
              - match: { path: /upload }
                \(route)
                multipart:
                  sniff: { content_type: keep }
                  strip_metadata: { formats: [jpeg, png], mode: remove }

            """.write(toFile: path, atomically: true, encoding: .utf8)
            return try ImageJudge.execute(formgateBinary, ["check", "-c", path])
        }
        let buffered = try check("request_body: buffer")
        #expect(buffered.status == 0, "\(buffered.output)\(buffered.errors)")
        for route in ["request_body: stream", ""] {
            let streamed = try check(route)
            #expect(streamed.status == 1, "'\(route)': accepted: \(streamed.output)\(streamed.errors)")
            #expect(
                (streamed.output + streamed.errors).contains("strip_metadata.mode"),
                "'\(route)': \(streamed.output)\(streamed.errors)")
        }
    }
}
