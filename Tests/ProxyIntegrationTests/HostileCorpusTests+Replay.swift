import Foundation
import Testing

/// The accepted hostile cases replayed through FormGate to PHP's `$_FILES`/`$_POST` and to
/// Werkzeug: each real parser reads the same values, sizes and sha256 as the demo upstream.
extension HostileCorpusTests {
    static let php = [
        "upload_max_filesize=64M", "post_max_size=64M", "max_file_uploads=2000", "max_input_vars=10000",
    ]

    @Test func acceptedCasesReachPHPAndWerkzeugByteExact() throws {
        let cases = try Self.cases().filter { $0.upstream == "sanitized" }
        #expect(cases.count >= 60)
        let (php, phpPort) = try startPHP(ini: Self.php)
        defer { php.stop() }
        let werkzeug = try startWerkzeug()
        let toPHP = try startProxy(
            "upstream: http://127.0.0.1:\(phpPort)\n" + Self.routes, workers: 1, accessLog: "off")
        let toWerkzeug = try startProxy(
            "upstream: \(werkzeug.url)\n" + Self.routes, workers: 1, accessLog: "off")
        for testCase in cases {
            let expected = try #require(testCase.parts)
            let fromPHP = try answer(toPHP.port, testCase, "PHP")
            let fromWerkzeug = try answer(toWerkzeug.port, testCase, "Werkzeug")
            checkPHP(fromPHP, expected, testCase.label)
            checkWerkzeug(fromWerkzeug, expected, testCase.label)
        }
    }

    /// A name or filename as the Werkzeug that answered reads it. FormGate forwards a literal
    /// `%22` as is (browsers escape `"` that way and keep `%` raw); Werkzeug 2.3 and later
    /// decode every `%22` in a quoted parameter to `"` (its `parse_options_header`), Debian
    /// 12's 2.2 and PHP do not. Nothing else differs for the accepted cases.
    static func werkzeugReads(_ sent: String, version: String) -> String {
        let release = version.split(separator: ".").prefix(2).map { Int($0) ?? 0 }
        return release.lexicographicallyPrecedes([2, 3]) ? sent : sent.replacing("%22", with: "\"")
    }

    func answer(_ port: Int, _ testCase: Case, _ server: String) throws -> [String: Any] {
        let client = try RawClient(port: port)
        client.send(try testCase.request)
        let response = try #require(
            client.readResponse(timeout: 60), "\(testCase.label): no answer from \(server)")
        #expect(response.status == 200, "\(testCase.label) via \(server): \(response.status)")
        // PHP's server answers chunked; the framing is read the same way as a forwarded request's.
        let body = ForwardedRequest(Array((response.head + "\r\n\r\n").utf8) + response.body).body
        guard let object = try? jsonObject(Data(body)) else {
            throw TestFailure(
                "\(testCase.label) via \(server): \(String(decoding: body.prefix(300), as: UTF8.self))")
        }
        return object
    }

    /// PHP: each file's name, size and sha256 in order (a file part with an empty name is
    /// UPLOAD_ERR_NO_FILE to PHP); the fields' values (PHP rewrites `.`, ` ` and `[` in
    /// field names, so values are compared as a multiset).
    func checkPHP(_ answer: [String: Any], _ expected: [Part], _ label: String) {
        let files = (answer["files"] as? [[String: Any]]) ?? []
        let expectedFiles = expected.filter { $0.filename != nil }
        #expect(files.count == expectedFiles.count, "\(label) via PHP: files \(files)")
        for (file, want) in zip(files, expectedFiles) {
            if want.filename == "" {
                #expect(file["error"] as? Int == 4, "\(label) via PHP: \(file)")
                continue
            }
            #expect(file["name"] as? String == want.filename, "\(label) via PHP: name \(file["name"] ?? "")")
            #expect(file["size"] as? Int == want.size, "\(label) via PHP: size \(file["size"] ?? "")")
            #expect(file["sha256"] as? String == want.sha256, "\(label) via PHP: sha256")
        }
        let post = (answer["post"] as? [String: Any]) ?? [:]
        #expect(
            leaves(post).sorted() == expected.compactMap(\.value).sorted(),
            "\(label) via PHP: fields \(post.prefix(5))")
    }

    /// Werkzeug: each field's value by name, each file's name, size and sha256 in order; names
    /// and filenames as the answering Werkzeug decodes them (`werkzeugReads`).
    func checkWerkzeug(_ answer: [String: Any], _ expected: [Part], _ label: String) {
        guard let version = answer["werkzeug"] as? String else {
            Issue.record("\(label) via Werkzeug: the answer names no Werkzeug version")
            return
        }
        let reads = { (sent: String) in Self.werkzeugReads(sent, version: version) }
        let fields = (answer["fields"] as? [String: Any]) ?? [:]
        let expectedFields = expected.filter { $0.filename == nil }
        #expect(
            fields.count == expectedFields.count, "\(label) via Werkzeug \(version): \(fields.count) fields")
        for want in expectedFields {
            #expect(
                fields[reads(want.name)] as? String == want.value,
                "\(label) via Werkzeug \(version): field \(reads(want.name))")
        }
        let files = (answer["files"] as? [[String: Any]]) ?? []
        let expectedFiles = expected.filter { $0.filename != nil }
        #expect(files.count == expectedFiles.count, "\(label) via Werkzeug \(version): files \(files)")
        for (file, want) in zip(files, expectedFiles) {
            #expect(file["field"] as? String == reads(want.name), "\(label) via Werkzeug \(version): \(file)")
            #expect(
                file["filename"] as? String == want.filename.map(reads),
                "\(label) via Werkzeug \(version): \(file)")
            #expect(file["size"] as? Int == want.size, "\(label) via Werkzeug: size")
            #expect(file["sha256"] as? String == want.sha256, "\(label) via Werkzeug: sha256")
        }
    }

    /// The string values of a decoded `$_POST`, nested arrays flattened.
    func leaves(_ value: Any) -> [String] {
        if let text = value as? String { return [text] }
        if let object = value as? [String: Any] { return object.values.flatMap(leaves) }
        if let array = value as? [Any] { return array.flatMap(leaves) }
        return []
    }
}
