import Foundation
import Testing

/// Tests/Fixtures/hostile (made by scripts/make-hostile-corpus.py): every hostile request gets
/// its status; refused ones reach the upstream not at all (or never completely), accepted ones
/// reach it in exactly the sanitized form.
@Suite(.serialized) struct HostileCorpusTests {
    struct Case: Decodable {
        var family: String
        var name: String
        var file: String
        var status: Int
        var upstream: String
        var parts: [[String?]]?
    }

    static let directory = packageRoot.appendingPathComponent("Tests/Fixtures/hostile")

    static func cases() throws -> [Case] {
        struct Manifest: Decodable { var cases: [Case] }
        let data = try Data(contentsOf: directory.appendingPathComponent("manifest.json"))
        return try JSONDecoder().decode(Manifest.self, from: data).cases
    }

    static let routes = """
        routes:
          - match: { path: /upload }
            multipart: {}

        """

    @Test func everyHostileCaseGetsItsOutcome() throws {
        let cases = try Self.cases()
        #expect(cases.count >= 150)
        let recorder = try FakeUpstream(.silent)
        let refusing = try startProxy(
            "upstream: \(recorder.url)\n" + Self.routes, workers: 1, accessLog: "off")
        let upstream = try startDemoUpstream()
        let accepting = try startProxy(
            "upstream: \(upstream.url)\n" + Self.routes, workers: 1, accessLog: "off")
        var ambiguousForwards = 0
        var outcomes: [String: Int] = [:]
        for testCase in cases {
            let request = [UInt8](try Data(contentsOf: Self.directory.appendingPathComponent(testCase.file)))
            let label = "\(testCase.family)/\(testCase.name)"
            if testCase.upstream == "nothing" || testCase.upstream == "incomplete" {
                let before = recorder.bytesReceived.count
                let client = try RawClient(port: refusing.port)
                client.send(request)
                let reply = String(decoding: client.readAll(timeout: 10), as: UTF8.self)
                #expect(reply.hasPrefix("HTTP/1.1 \(testCase.status) "), "\(label): \(reply.prefix(120))")
                // Let bytes of an abandoned upstream request land before the next case starts.
                if testCase.upstream == "incomplete" { Thread.sleep(forTimeInterval: 0.3) }
                let seen = Array(recorder.bytesReceived.dropFirst(before))
                if testCase.upstream == "nothing", !seen.isEmpty {
                    Issue.record("\(label): the upstream received \(seen.count) bytes")
                    ambiguousForwards += 1
                }
                let text = String(decoding: seen, as: UTF8.self)
                if text.hasSuffix("0\r\n\r\n") || text.contains("--\r\n0\r\n") {
                    Issue.record("\(label): the upstream received a complete request")
                    ambiguousForwards += 1
                }
            } else {
                let client = try RawClient(port: accepting.port)
                client.send(request)
                let response = try #require(client.readResponse(timeout: 20), "\(label): no response")
                #expect(
                    response.status == testCase.status,
                    "\(label): \(String(decoding: response.body.prefix(200), as: UTF8.self))")
                if let expected = testCase.parts, response.status == 200 {
                    let receipt = try jsonObject(Data(response.body))
                    let names = (receipt["parts"] as? [String]) ?? []
                    let files = (receipt["files"] as? [[String: Any]]) ?? []
                    #expect(names == expected.map { $0[0] ?? "" }, "\(label): parts \(names)")
                    let expectedFiles = expected.compactMap { $0[1] }
                    #expect(
                        files.map { $0["filename"] as? String ?? "?" } == expectedFiles,
                        "\(label): files \(files)")
                    // What FormGate forwards is canonical; a kept Content-Transfer-Encoding is the
                    // only thing the upstream's parser may note.
                    let anomalies = ((receipt["anomalies"] as? [String]) ?? []).filter {
                        $0 != "content_transfer_encoding"
                    }
                    #expect(anomalies == [], "\(label): upstream saw anomalies \(anomalies)")
                }
            }
            outcomes["\(testCase.family) \(testCase.status)", default: 0] += 1
        }
        print(
            "hostile corpus: \(cases.count) cases, ambiguous forwards \(ambiguousForwards), outcomes \(outcomes.sorted { $0.key < $1.key })"
        )
        recordFigure(
            "hostile-corpus", ["cases": cases.count, "ambiguous_forwards": ambiguousForwards])
        #expect(ambiguousForwards == 0)
    }
}
