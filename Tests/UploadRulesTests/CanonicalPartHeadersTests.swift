import HTTPCore
import MultipartEncoding
import MultipartParsing
import Testing

@testable import UploadRules

/// What the upstream gets of each part's head: Content-Disposition, Content-Type (declared,
/// sniffed or repaired) and the headers the route keeps, nothing else (RFC 7578 §4.8).
@Suite struct CanonicalPartHeadersTests {
    static let boundary = try! Boundary("fgB0UNDARY")

    /// Runs `input` (boundary `b`) through `rules` at every split point; every feeding must
    /// give the same bytes. Returns them and the pipeline of the whole-input run.
    func encode(_ rules: RuleSet, _ input: String) throws -> (String, RulePipeline<ByteArraySink>) {
        let bytes = Array(input.utf8)
        var outputs: [[UInt8]] = []
        var whole: RulePipeline<ByteArraySink>?
        for cut in [0] + Array(1..<bytes.count) {
            var pipeline = RulePipeline(
                rules: rules, sink: ByteArraySink(), headers: HeaderFields(), now: 0, boundary: Self.boundary)
            var parser = try MultipartParser(boundary: "b", policy: rules.policy)
            try parser.feed(Array(bytes[..<cut]), into: &pipeline)
            try parser.feed(Array(bytes[cut...]), into: &pipeline)
            try parser.finish(into: &pipeline)
            #expect(pipeline.refusal == nil)
            outputs.append(pipeline.sink.bytes)
            if whole == nil { whole = pipeline }
        }
        #expect(Set(outputs).count == 1, "output depends on the split")
        return (String(decoding: outputs[0], as: UTF8.self), whole!)
    }

    /// python-multipart's `header_with_number` part, and busboy's `26-empty-part`.
    @Test func headersBeyondRFC7578AreDropped() throws {
        let input =
            "--b\r\nContent-Disposition: form-data; filename=\"secret.txt\"; name=\"files\"\r\n"
            + "Content-Type: text/plain; charset=utf-8\r\nX-Funky-Header-1: bar\r\n"
            + "other!#$%&'*+-.^_`|~: baz\r\nContent-Length: 6\r\n\r\naaaaaa\r\n"
            + "--b\r\nContent-Type: application/gzip\r\nContent-Encoding: gzip\r\n"
            + "Content-Disposition: form-data; name=batch-1; filename=batch-1\r\n\r\n\r\n--b--"
        let (output, pipeline) = try encode(RuleSet(), input)
        #expect(
            output
                == "--fgB0UNDARY\r\nContent-Disposition: form-data; name=\"files\"; filename=\"secret.txt\"\r\n"
                + "Content-Type: text/plain; charset=utf-8\r\n\r\naaaaaa\r\n"
                + "--fgB0UNDARY\r\nContent-Disposition: form-data; name=\"batch-1\"; filename=\"batch-1\"\r\n"
                + "Content-Type: application/gzip\r\n\r\n\r\n--fgB0UNDARY--\r\n")
        #expect(pipeline.records.map(\.contentType) == ["text/plain; charset=utf-8", "application/gzip"])
    }

    @Test func keptHeadersAreForwardedInOrder() throws {
        var rules = RuleSet()
        rules.policy = MultipartPolicy(keepingHeaders: ["x-checksum", "Content-Transfer-Encoding"])
        let input =
            "--b\r\nX-Checksum: abc\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.bin\"\r\n"
            + "X-Other: 1\r\nContent-Transfer-Encoding: base64\r\nContent-Type: application/octet-stream\r\n\r\n"
            + "QUJD\r\n--b--\r\n"
        let (output, _) = try encode(rules, input)
        #expect(
            output
                == "--fgB0UNDARY\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.bin\"\r\n"
                + "Content-Type: application/octet-stream\r\nX-Checksum: abc\r\nContent-Transfer-Encoding: base64\r\n"
                + "\r\nQUJD\r\n--fgB0UNDARY--\r\n")
    }

    /// Without `keep_part_headers: [Content-Transfer-Encoding]` the encoding is dropped: the
    /// upstream reads the bytes FormGate sniffed, judged and hashed.
    @Test func transferEncodingIsDroppedUnlessKept() throws {
        let input =
            "--b\r\nContent-Disposition: form-data; name=\"f\"\r\nContent-Transfer-Encoding: binary\r\n\r\nv\r\n--b--\r\n"
        let (output, _) = try encode(RuleSet(), input)
        #expect(
            output
                == "--fgB0UNDARY\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nv\r\n--fgB0UNDARY--\r\n"
        )
    }

    /// dicer's `nested` (RFC 1867 §6): a field whose Content-Type does not parse goes as
    /// application/octet-stream; the log keeps what was declared.
    @Test func invalidContentTypeIsRepairedToOctetStream() throws {
        let declared = "multipart/mixed, boundary=BbC04y"
        let input =
            "--b\r\nContent-Disposition: form-data; name=\"files\"\r\nContent-Type: \(declared)\r\n\r\n"
            + "--BbC04y\r\n\r\nx\r\n--BbC04y--\r\n--b--\r\n"
        let (output, pipeline) = try encode(RuleSet(), input)
        #expect(
            output
                == "--fgB0UNDARY\r\nContent-Disposition: form-data; name=\"files\"\r\nContent-Type: application/octet-stream\r\n"
                + "\r\n--BbC04y\r\n\r\nx\r\n--BbC04y--\r\n--fgB0UNDARY--\r\n")
        #expect(pipeline.records.first?.declaredType == declared)
        #expect(pipeline.records.first?.contentType == "application/octet-stream")
    }

    /// With sniffing, a file part with an unparsable type goes as the sniffed type, whatever
    /// the sniff policy (keep would forward the declared value, which cannot be read).
    @Test(arguments: [RuleSet.SniffPolicy.override, .keep])
    func invalidContentTypeOfAFileIsTheSniffedType(_ policy: RuleSet.SniffPolicy) throws {
        var rules = RuleSet()
        rules.sniff = RuleSet.SniffRule(bytes: 16, policy: policy)
        let pdf = "%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n%%EOF\n"
        let input =
            "--b\r\nContent-Disposition: form-data; name=\"f\"; filename=\"p.pdf\"\r\nContent-Type: application\r\n\r\n"
            + pdf + "\r\n--b--\r\n"
        let (output, pipeline) = try encode(rules, input)
        #expect(output.contains("\r\nContent-Type: application/pdf\r\n\r\n%PDF"))
        #expect(pipeline.records.first?.declaredType == "application")
        #expect(pipeline.records.first?.sniffedType == "application/pdf")
    }

    /// A client field named like an injected one is dropped without `drop_fields`, also when a
    /// rename would give it that name; the upstream sees the injected value once.
    @Test func clientFieldsCannotShadowInjectedOnes() throws {
        var rules = RuleSet()
        rules.renameFields = ["alias": "uploader"]
        rules.inject = [
            Injection(name: "token", position: .first, value: .template(try Template("minted"))),
            Injection(name: "uploader", position: .last, value: .template(try Template("proxy"))),
        ]
        let input =
            "--b\r\nContent-Disposition: form-data; name=\"token\"\r\n\r\nforged\r\n"
            + "--b\r\nContent-Disposition: form-data; name=\"alias\"\r\n\r\nme\r\n"
            + "--b\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nhi\r\n--b--\r\n"
        let (output, pipeline) = try encode(rules, input)
        #expect(!output.contains("forged"))
        #expect(!output.contains("\r\n\r\nme\r\n"))
        #expect(output.ranges(of: "name=\"token\"").count == 1)
        #expect(output.ranges(of: "name=\"uploader\"").count == 1)
        #expect(pipeline.records.map(\.name) == ["token", "alias", "title"])
        #expect(pipeline.records.map(\.dropped) == [true, true, false])
        #expect(pipeline.injected == ["token", "uploader"])
    }
}
