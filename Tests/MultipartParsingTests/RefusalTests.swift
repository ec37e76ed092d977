import HTTPCore
import MultipartParsing
import Testing

/// What is ambiguous or dangerous is refused, with the reason and the byte offset, whatever
/// the read boundaries.
@Suite struct RefusalTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var what: String
        var body: String
        var reason: MultipartError.Reason
        var offset: Int64?
        var limits = MultipartLimits()
        var testDescription: String { what }
    }

    static let head = "--b0undary\r\n"
    static let disposition = "Content-Disposition: form-data; name=\"a\"\r\n"
    static let tail = "\r\nv\r\n--b0undary--\r\n"

    static let cases: [Case] = [
        Case(
            what: "CR inside a header value",
            body: head + "Content-Disposition: form-data; n\rame=\"a\"\r\n" + tail,
            reason: .controlCharacterInHeader, offset: 45),
        Case(
            what: "bare LF inside a CRLF header section",
            body: head + "Content-Disposition: form-data; name=\"a\"\nX: y\r\n" + tail,
            reason: .controlCharacterInHeader, offset: 52),
        Case(
            what: "NUL inside a header value",
            body: head + "Content-Disposition: form-data; name=\"a\0\"\r\n" + tail,
            reason: .controlCharacterInHeader),
        Case(
            what: "duplicate name",
            body: head + "Content-Disposition: form-data; name=\"a\"; name=\"b\"\r\n" + tail,
            reason: .invalidContentDisposition(.duplicateParameter("name"))),
        Case(
            what: "duplicate filename",
            body: head + "Content-Disposition: form-data; name=\"a\"; filename=\"x\"; FILENAME=\"y\"\r\n"
                + tail,
            reason: .invalidContentDisposition(.duplicateParameter("filename"))),
        Case(
            what: "filename* disagrees with filename",
            body: head
                + "Content-Disposition: form-data; name=\"a\"; filename=\"a.jpg\"; filename*=UTF-8''a.php\r\n"
                + tail,
            reason: .invalidContentDisposition(.filenameMismatch)),
        Case(
            what: "junk after a quoted value",
            body: head + "Content-Disposition: form-data; name=\"a\"x; filename=\"y\"\r\n" + tail,
            reason: .invalidContentDisposition(.junkAfterValue)),
        Case(
            what: "single-quoted value with a space",
            body: head + "Content-Disposition: form-data; name='a b\"'\r\n" + tail,
            reason: .invalidContentDisposition(.invalidParameter)),
        Case(
            what: "duplicate Content-Disposition", body: head + disposition + disposition + tail,
            reason: .duplicateHeader("Content-Disposition")),
        Case(
            what: "duplicate Content-Type",
            body: head + disposition + "Content-Type: text/plain\r\nContent-Type: image/png\r\n" + tail,
            reason: .duplicateHeader("Content-Type")),
        Case(
            what: "inline Content-Type beside a Content-Type header",
            body: head
                + "Content-Disposition: form-data; name=a; Content-Type: image/png\r\nContent-Type: text/html\r\n"
                + tail,
            reason: .duplicateHeader("Content-Type")),
        Case(
            what: "no Content-Disposition", body: head + "Content-Type: text/plain\r\n" + tail,
            reason: .missingContentDisposition),
        Case(
            what: "no name", body: head + "Content-Disposition: form-data; filename=\"x\"\r\n" + tail,
            reason: .missingName),
        Case(
            what: "not form-data", body: head + "Content-Disposition: attachment; name=\"a\"\r\n" + tail,
            reason: .unsupportedDispositionType),
        Case(
            what: "folded header", body: head + disposition + "X-A: 1\r\n 2\r\n" + tail,
            reason: .headerFolding,
            offset: 62),
        Case(
            what: "leading space on the first header", body: head + " " + disposition + tail,
            reason: .leadingWhitespace, offset: 12),
        Case(
            what: "space before the colon",
            body: head + "Content-Disposition : form-data; name=\"a\"\r\n" + tail,
            reason: .whitespaceBeforeColon, offset: 31),
        Case(
            what: "empty header name", body: head + ": x\r\n" + disposition + tail, reason: .invalidHeaderName
        ),
        Case(
            what: "header without colon", body: head + disposition + "Garbage\r\n" + tail,
            reason: .invalidHeaderName),
        Case(
            what: "delimiter line ends in bare LF in a CRLF body",
            body: head + disposition + "\r\nv\r\n--b0undary\n" + disposition + tail, reason: .mixedLineEndings
        ),
        Case(
            what: "CRLF delimiter in an LF body",
            body: "--b0undary\nContent-Disposition: form-data; name=\"a\"\n\nv\r\n--b0undary--\n",
            reason: .mixedLineEndings),
        Case(
            what: "CR in an LF header section",
            body: "--b0undary\nContent-Disposition: form-data; name=\"a\"\r\n\nv\n--b0undary--\n",
            reason: .controlCharacterInHeader),
        Case(
            what: "no closing delimiter", body: head + disposition + "\r\nv\r\n", reason: .unexpectedEnd,
            offset: 59),
        Case(
            what: "close delimiter without dashes", body: head + disposition + "\r\nv\r\n--b0undary\r\n",
            reason: .unexpectedEnd),
        Case(what: "empty body", body: "", reason: .unexpectedEnd, offset: 0),
        Case(
            what: "junk after a delimiter", body: "--b0undary  x\r\n" + disposition + tail,
            reason: .junkAfterDelimiter),
        Case(
            what: "preamble line for another boundary",
            body: "hello\r\n--other\r\n" + head + disposition + tail,
            reason: .foreignDelimiter, offset: 9),
        Case(
            what: "first line for another boundary", body: "--other\r\n" + disposition + tail,
            reason: .foreignDelimiter,
            offset: 2),
        Case(
            what: "delimiter look-alike before any part", body: "--b0undaryX\r\n" + tail,
            reason: .foreignDelimiter),
        Case(
            what: "too many parts", body: head + disposition + "\r\n1\r\n--b0undary\r\n" + disposition + tail,
            reason: .limitExceeded(.parts), offset: 70, limits: MultipartLimits(parts: 1)),
        Case(
            what: "too many fields",
            body: head + disposition + "\r\n1\r\n--b0undary\r\n" + disposition + tail,
            reason: .limitExceeded(.fields), limits: MultipartLimits(fields: 1)),
        Case(
            what: "too many files",
            body: head + "Content-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n" + tail,
            reason: .limitExceeded(.files), limits: MultipartLimits(files: 0)),
        Case(
            what: "part header section too large",
            body: head + disposition + "X-Pad: " + String(repeating: "p", count: 100)
                + "\r\n" + tail,
            reason: .limitExceeded(.partHeaderBytes), offset: 12 + 64,
            limits: MultipartLimits(partHeaderBytes: 64)),
        Case(
            what: "too many header lines", body: head + disposition + "A: 1\r\nB: 2\r\n" + tail,
            reason: .limitExceeded(.headersPerPart), limits: MultipartLimits(headersPerPart: 2)),
        Case(
            what: "field over its limit", body: head + disposition + "\r\n0123456789\r\n--b0undary--\r\n",
            reason: .limitExceeded(.fieldBytes), offset: 56 + 4, limits: MultipartLimits(fieldBytes: 4)),
        Case(
            what: "file over its limit",
            body: head
                + "Content-Disposition: form-data; name=\"f\"; filename=\"x\"\r\n\r\n0123456789\r\n--b0undary--\r\n",
            reason: .limitExceeded(.fileBytes), offset: 70 + 9, limits: MultipartLimits(fileBytes: 9)),
    ]

    @Test(arguments: cases)
    func refused(_ testCase: Case) throws {
        let result = parseEverySplit(Array(testCase.body.utf8), limits: testCase.limits)
        let error = try #require(result.error)
        #expect(error.reason == testCase.reason)
        if let offset = testCase.offset { #expect(error.offset == offset) }
        #expect(error.isLimit == (testCase.limits != MultipartLimits()))
    }

    @Test func fieldExactlyAtItsLimitIsAccepted() {
        let input = Array((Self.head + Self.disposition + "\r\n0123\r\n--b0undary--\r\n").utf8)
        #expect(parseEverySplit(input, limits: MultipartLimits(fieldBytes: 4)).error == nil)
    }

    @Test func decoyFilenameInsideAQuotedNameIsNotAFile() throws {
        let input = Array(
            (Self.head + "Content-Disposition: form-data; name=\"a; filename=evil.php\"\r\n" + Self.tail).utf8
        )
        let result = parseEverySplit(input)
        let head = try #require(result.parts.first?.head)
        #expect(head.nameString == "a; filename=evil.php")
        #expect(!head.isFile)
    }

    @Test(arguments: [
        "", String(repeating: "a", count: 71), "a@b", "back\\slash", "trailing ", "tab\there", "é",
    ])
    func invalidBoundaries(_ boundary: String) {
        #expect(throws: MultipartError(.invalidBoundary, at: 0)) {
            try MultipartParser(boundary: boundary)
        }
    }

    @Test(arguments: [String(repeating: "z", count: 70), "'()+_,-./:=? x", "1"])
    func validBoundaries(_ boundary: String) throws {
        var input = Array("--\(boundary)\r\n".utf8)
        input += Array((Self.disposition + "\r\nv\r\n--\(boundary)--\r\n").utf8)
        let result = parseEverySplit(input, boundary: boundary)
        #expect(result.error == nil)
        #expect(result.parts.count == 1)
    }

    @Test func failedParserStaysFailed() throws {
        var parser = try MultipartParser(boundary: "b0undary")
        var collector = Collector()
        #expect(throws: MultipartError.self) { try parser.feed(Array("--other\r\n".utf8), into: &collector) }
        #expect(throws: MultipartError.self) { try parser.feed(Array("--b0undary--".utf8), into: &collector) }
        #expect(throws: MultipartError.self) { try parser.finish(into: &collector) }
    }
}
