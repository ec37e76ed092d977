import HTTPCore
import MultipartParsing
import Testing

/// Each anomaly flag is repaired by default and refused under a policy that rejects it, at
/// the byte where it is raised, whatever the read boundaries.
@Suite struct PolicyTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var flag: MultipartAnomalies
        var body: String
        var offset: Int64
        var testDescription: String { flag.names.joined() }
    }

    static let head = "--b0undary\r\n"
    static let disposition = "Content-Disposition: form-data; name=\"a\"\r\n"
    static let tail = "\r\nv\r\n--b0undary--\r\n"

    static let cases: [Case] = [
        Case(flag: .dataBefore, body: "\r\n" + head + disposition + tail, offset: 0),
        Case(flag: .dataAfter, body: head + disposition + tail + "bye", offset: 73),
        Case(
            flag: .lfLineEndings,
            body: "--b0undary\nContent-Disposition: form-data; name=a\n\nv\n--b0undary--\n",
            offset: 10),
        Case(
            flag: .unquotedParameter, body: head + "Content-Disposition: form-data; name=a\r\n" + tail,
            offset: 54),
        Case(
            flag: .extendedFilename,
            body: head + "Content-Disposition: form-data; name=\"a\"; filename*=UTF-8''x.txt\r\n" + tail,
            offset: 80),
        Case(flag: .missingFinalLineBreak, body: head + disposition + "\r\nv\r\n--b0undary--", offset: 71),
        Case(flag: .transportPadding, body: "--b0undary \r\n" + disposition + tail, offset: 10),
        Case(
            flag: .inlineContentType,
            body: head + "Content-Disposition: form-data; name=\"a\"; Content-Type: text/plain\r\n" + tail,
            offset: 82),
        Case(
            flag: .contentTransferEncoding,
            body: head + disposition + "Content-Transfer-Encoding: binary\r\n" + tail,
            offset: 91),
        Case(flag: .boundaryLookalike, body: head + disposition + "\r\nx\r\n--b0undaryX" + tail, offset: 69),
        Case(
            flag: .headerWithoutSpace, body: head + "Content-Disposition:form-data; name=\"a\"\r\n" + tail,
            offset: 32),
        Case(
            flag: .dispositionJunk,
            body: head + "Content-Disposition: form-data; junk; name=\"a\"\r\n" + tail,
            offset: 62),
        Case(
            flag: .extraPartHeader, body: head + disposition + "X-Funky-Header-1: bar\r\n" + tail, offset: 79),
        Case(
            flag: .invalidPartContentType,
            body: head + disposition + "Content-Type: multipart/mixed, boundary=BbC04y\r\n" + tail,
            offset: 104),
        Case(flag: .bareLFDelimiter, body: head + disposition + "\r\nx\n--b0undary\r\n" + tail, offset: 57),
    ]

    @Test(arguments: cases)
    func flagIsRepairedByDefault(_ testCase: Case) throws {
        let result = parseEverySplit(Array(testCase.body.utf8))
        #expect(result.error == nil)
        #expect(result.anomalies.contains(testCase.flag))
        #expect(result.ended)
    }

    @Test(arguments: cases)
    func flagIsRefusedWhenRejected(_ testCase: Case) throws {
        let policy = MultipartPolicy(rejecting: testCase.flag)
        let result = parseEverySplit(Array(testCase.body.utf8), policy: policy)
        let error = try #require(result.error)
        #expect(error.reason == .rejectedAnomaly(testCase.flag))
        #expect(error.offset == testCase.offset)
        // Refused before `end`: a re-encoder never writes its closing delimiter.
        #expect(!result.ended)
    }

    @Test func everyBodyFlagHasACase() {
        let covered = Self.cases.map(\.flag).reduce(into: MultipartAnomalies()) { $0.formUnion($1) }
        let all = MultipartAnomalies.allNames.map { MultipartAnomalies(name: $0)! }
        #expect(all.filter { !covered.contains($0) } == [.commaSeparatedParameters])
    }

    /// `end` comes from `finish`, after the epilogue was judged, never from `feed`.
    @Test func endIsReportedByFinish() throws {
        var parser = try MultipartParser(boundary: "b0undary")
        var collector = Collector()
        try parser.feed(Array((Self.head + Self.disposition + Self.tail + "epilogue").utf8), into: &collector)
        #expect(parser.isComplete)
        #expect(!collector.result.ended)
        try parser.finish(into: &collector)
        #expect(collector.result.ended)
    }

    @Test func requestAnomaliesAreJudgedByThePolicy() throws {
        let type = try MediaType.parse(
            "multipart/form-data, boundary=b0undary", accepting: .commaSeparatedParameters)
        let flags = MultipartAnomalies(requestContentType: type)
        #expect(flags == .commaSeparatedParameters)
        let parser = try MultipartParser(boundary: type.multipartBoundary(), requestAnomalies: flags)
        #expect(parser.anomalies == .commaSeparatedParameters)
        #expect(throws: MultipartError(.rejectedAnomaly(.commaSeparatedParameters), at: 0)) {
            try MultipartParser(
                boundary: type.multipartBoundary(),
                policy: MultipartPolicy(rejecting: .commaSeparatedParameters),
                requestAnomalies: flags)
        }
    }

    /// python-multipart's `header_with_number`: every header beside Content-Disposition and
    /// Content-Type is flagged unless the route keeps it by name (any case).
    @Test func extraHeadersAreFlaggedUnlessKept() throws {
        let headers = "X-Funky-Header-1: bar\r\nabcdefghijklmnopqrstuvwxyz01234: foo\r\nContent-Length: 6\r\n"
        let input = Array(
            (Self.head + Self.disposition + "Content-Type: text/plain\r\n" + headers + Self.tail).utf8)
        let flagged = parseEverySplit(input)
        #expect(flagged.error == nil)
        #expect(flagged.anomalies == .extraPartHeader)
        let head = try #require(flagged.parts.first?.head)
        #expect(head.headers.count == 5)
        #expect(head.contentType?.essence == "text/plain")

        let keptAll = MultipartPolicy(
            keepingHeaders: ["x-funky-header-1", "ABCDEFGHIJKLMNOPQRSTUVWXYZ01234", "Content-Length"])
        #expect(parseEverySplit(input, policy: keptAll).anomalies == [])
        let keptOne = MultipartPolicy(keepingHeaders: ["X-Funky-Header-1"])
        #expect(parseEverySplit(input, policy: keptOne).anomalies == .extraPartHeader)
    }

    @Test func keptHeaderMustBeUnique() throws {
        let input = Array(
            (Self.head + Self.disposition + "X-Checksum: 1\r\nx-checksum: 2\r\n" + Self.tail).utf8)
        let kept = parseEverySplit(input, policy: MultipartPolicy(keepingHeaders: ["X-Checksum"]))
        #expect(kept.error == MultipartError(.duplicateHeader("x-checksum"), at: 86))
        // Dropped anyway when not kept: flagged, not refused.
        #expect(parseEverySplit(input).anomalies == .extraPartHeader)
    }

    /// dicer's `nested` capture (RFC 1867 §6's example): the part's Content-Type does not parse;
    /// the part is read, its declared value kept for the log.
    @Test func invalidPartContentTypeIsKeptAsDeclared() throws {
        let declared = "multipart/mixed, boundary=BbC04y"
        let input = Array((Self.head + Self.disposition + "Content-Type: \(declared)\r\n" + Self.tail).utf8)
        let result = parseEverySplit(input)
        #expect(result.error == nil)
        let head = try #require(result.parts.first?.head)
        #expect(head.contentType == nil)
        #expect(head.declaredContentType == Array(declared.utf8))
        #expect(head.hasInvalidContentType)
        #expect(result.anomalies == .invalidPartContentType)
    }

    @Test func emptyContentTypeIsNoContentType() throws {
        let input = Array((Self.head + Self.disposition + "Content-Type:\r\n" + Self.tail).utf8)
        let head = try #require(parseEverySplit(input).parts.first?.head)
        #expect(head.declaredContentType == nil)
        #expect(!head.hasInvalidContentType)
    }
}
