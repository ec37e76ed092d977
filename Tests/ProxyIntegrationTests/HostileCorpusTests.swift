import Foundation
import Testing

/// Tests/Fixtures/hostile (made by scripts/make-hostile-corpus.py): every hostile request gets
/// its status; refused ones reach the upstream not at all (or never completely), accepted ones
/// reach it in exactly the sanitized form, byte for byte.
@Suite(.serialized) struct HostileCorpusTests {
    /// What the upstream must receive of one part (see the generator).
    struct Part: Decodable {
        var name: String
        var filename: String?
        var size: Int
        var sha256: String
        var value: String?
    }
    struct Body: Decodable {
        var size: Int
        var sha256: String
    }
    struct Case: Decodable {
        var family: String
        var name: String
        var file: String
        var status: Int
        var upstream: String
        var parts: [Part]?
        var body: Body?
        var reason: String?

        var label: String { "\(family)/\(name)" }
        var request: [UInt8] {
            get throws {
                [UInt8](try Data(contentsOf: HostileCorpusTests.directory.appendingPathComponent(file)))
            }
        }
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

    @Test func refusedCasesNeverReachTheUpstreamWhole() throws {
        let cases = try Self.cases().filter { $0.upstream == "nothing" || $0.upstream == "incomplete" }
        #expect(cases.count >= 100)
        let recorder = try FakeUpstream(.silent)
        let proxy = try startProxy("upstream: \(recorder.url)\n" + Self.routes, workers: 1)
        var ambiguousForwards = 0
        for (index, testCase) in cases.enumerated() {
            let label = testCase.label
            let streamsBefore = recorder.connections
            let client = try RawClient(port: proxy.port)
            client.send(try testCase.request)
            let reply = String(decoding: client.readAll(timeout: 30), as: UTF8.self)
            #expect(reply.hasPrefix("HTTP/1.1 \(testCase.status) "), "\(label): \(reply.prefix(120))")
            // Settled: the request's access-log line is written and the proxy has closed every
            // upstream connection it opened.
            let settled = eventually { proxy.stdoutLineCount > index && recorder.openConnections == 0 }
            #expect(settled, "\(label): no access-log line, or an upstream connection left open")
            let streams = recorder.streams.dropFirst(streamsBefore)
            let bytes = streams.reduce(0) { $0 + $1.count }
            if testCase.upstream == "nothing", bytes > 0 {
                Issue.record("\(label): the upstream received \(bytes) bytes")
                ambiguousForwards += 1
            }
            for stream in streams where ForwardedRequest(stream).isComplete {
                Issue.record("\(label): the upstream received a complete request")
                ambiguousForwards += 1
            }
        }
        // Nothing arrived late: every connection the proxy ever opened is closed and incomplete.
        #expect(eventually { recorder.openConnections == 0 })
        let late = recorder.streams.filter { ForwardedRequest($0).isComplete }.count
        #expect(late == 0, "\(late) complete requests reached the upstream by the end")
        #expect(proxy.stdoutLineCount == cases.count)
        print("hostile corpus: \(cases.count) refused cases, ambiguous forwards \(ambiguousForwards + late)")
        recordFigure(
            "hostile-corpus", ["refused_cases": cases.count, "ambiguous_forwards": ambiguousForwards + late])
        #expect(ambiguousForwards == 0)
    }

    @Test func acceptedCasesArriveByteExact() throws {
        let cases = try Self.cases().filter { $0.upstream == "sanitized" || $0.upstream == "passthrough" }
        #expect(cases.count >= 60)
        let upstream = try startDemoUpstream()
        let proxy = try startProxy("upstream: \(upstream.url)\n" + Self.routes, workers: 1, accessLog: "off")
        var outcomes: [String: Int] = [:]
        for testCase in cases {
            let client = try RawClient(port: proxy.port)
            client.send(try testCase.request)
            let response = try #require(client.readResponse(timeout: 60), "\(testCase.label): no response")
            #expect(
                response.status == testCase.status,
                "\(testCase.label): \(String(decoding: response.body.prefix(200), as: UTF8.self))")
            guard response.status == 200 else { continue }
            let receipt = try jsonObject(Data(response.body))
            if let body = testCase.body {
                #expect(receipt["body_size"] as? Int == body.size, "\(testCase.label): body size")
                #expect(receipt["body_sha256"] as? String == body.sha256, "\(testCase.label): body sha256")
            } else {
                check(receipt, against: try #require(testCase.parts), testCase.label)
            }
            outcomes["\(testCase.family) \(testCase.upstream)", default: 0] += 1
        }
        print("hostile corpus: \(cases.count) accepted cases, \(outcomes.sorted { $0.key < $1.key })")
    }

    /// The demo upstream's receipt shows exactly the expected parts: names in order, each
    /// field's value and size, each file's name, size and sha256, and no anomaly.
    func check(_ receipt: [String: Any], against expected: [Part], _ label: String) {
        let names = (receipt["parts"] as? [String]) ?? []
        #expect(names == expected.map(\.name), "\(label): parts \(names.prefix(20))")
        let fields = (receipt["fields"] as? [[String: Any]]) ?? []
        let files = (receipt["files"] as? [[String: Any]]) ?? []
        let expectedFields = expected.filter { $0.filename == nil }
        let expectedFiles = expected.filter { $0.filename != nil }
        #expect(fields.count == expectedFields.count, "\(label): \(fields.count) fields")
        #expect(files.count == expectedFiles.count, "\(label): \(files.count) files")
        for (field, want) in zip(fields, expectedFields) {
            #expect(field["name"] as? String == want.name, "\(label): field \(field)")
            #expect(field["size"] as? Int == want.size, "\(label): size of field \(want.name)")
            if let value = want.value {
                #expect(field["value"] as? String == value, "\(label): value of field \(want.name)")
            }
        }
        for (file, want) in zip(files, expectedFiles) {
            #expect(file["name"] as? String == want.name, "\(label): file \(file)")
            #expect(
                file["filename"] as? String == want.filename, "\(label): filename \(file["filename"] ?? "")")
            #expect(file["size"] as? Int == want.size, "\(label): size of \(want.name)")
            #expect(file["sha256"] as? String == want.sha256, "\(label): sha256 of \(want.name)")
        }
        // What FormGate forwards is canonical; a kept Content-Transfer-Encoding is the only
        // thing the upstream's parser may note.
        let anomalies = ((receipt["anomalies"] as? [String]) ?? []).filter {
            $0 != "content_transfer_encoding"
        }
        #expect(anomalies == [], "\(label): upstream saw anomalies \(anomalies)")
    }

    /// Every decision the issue asked for (NTFS streams, trailing dots, large preamble or
    /// epilogue, single quotes, invalid UTF-8, bidi controls, long names) has its reason
    /// beside the fixture.
    @Test func decisionsCarryTheirReason() throws {
        let cases = try Self.cases()
        for name in [
            "ntfs-stream", "ntfs-stream-colon", "ntfs-stream-php", "trailing-dots", "crlf-preamble",
            "crlf-epilogue", "preamble-text-1mib", "epilogue-text-64kib", "single-quotes",
            "single-quoted-filename", "invalid-utf8", "invalid-utf8-inside", "bidi-override",
            "long-ascii-300", "long-utf8-404-bytes",
        ] {
            let testCase = try #require(cases.first { $0.name == name }, "no case \(name)")
            #expect(testCase.reason?.isEmpty == false, "\(name) has no reason")
        }
    }
}
