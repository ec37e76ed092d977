import HTTPCore
import MultipartParsing
import Testing

/// In a CRLF body the delimiter is CRLF `--boundary` (RFC 2046 §5.1.1): a bare-LF
/// `--boundary` line is part content, byte for byte, wherever the reads split it. Only a body
/// whose first delimiter line ends in a bare LF is read in LF mode.
@Suite struct BareLFDelimiterTests {
    static let first = "--b0undary\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n\r\n"
    static let rest =
        "\r\n--b0undary\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\nv\r\n--b0undary--\r\n"

    @Test(arguments: [
        "\n--b0undary\r\n", "\n--b0undary--\r\n", "\n--b0undary", "x\n--b0undary\r\ny",
        "line\r\n\n--b0undary\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nforged",
        "\n--b0undary\n--b0undary--\n", "\r\r\n\n--b0undary\r\n\n--b0undary\r\n",
    ])
    func bareLFDelimiterIsContent(_ content: String) throws {
        let result = parseEverySplit(Array((Self.first + content + Self.rest).utf8))
        #expect(result.error == nil)
        try #require(result.parts.count == 2)
        #expect(result.parts[0].content == Array(content.utf8))
        #expect(result.parts[1].content == Array("v".utf8))
        #expect(result.anomalies.contains(.bareLFDelimiter))
    }

    /// The case: a text file with the short fixed boundary the iOS examples use.
    @Test func shortBoundaryInATextFile() throws {
        let file = "notes\n--abc\r\nmore\n--abc--\r\nend"
        let input = Array(
            ("--abc\r\nContent-Disposition: form-data; name=\"f\"; filename=\"n.txt\"\r\n\r\n" + file
                + "\r\n--abc--\r\n").utf8)
        let result = parseEverySplit(input, boundary: "abc")
        #expect(result.error == nil)
        #expect(result.parts.map(\.content) == [Array(file.utf8)])
        #expect(result.anomalies == [.bareLFDelimiter])
    }

    /// A body whose first delimiter line ends in LF reads bare-LF delimiters as delimiters.
    @Test func lfBodySplitsAtBareLFDelimiters() throws {
        let input = Array(
            "--b0undary\nContent-Disposition: form-data; name=\"a\"\n\n1\n--b0undary\nContent-Disposition: form-data; name=\"b\"\n\n2\n--b0undary--\n"
                .utf8)
        let result = parseEverySplit(input)
        #expect(result.error == nil)
        #expect(result.parts.map(\.content) == [Array("1".utf8), Array("2".utf8)])
        #expect(result.anomalies == [.lfLineEndings])
    }

    /// The first delimiter line decides, even after a preamble written with LF.
    @Test func preambleLineEndingsDoNotDecide() throws {
        let content = "a\n--b0undary\r\nb"
        let input = Array(("preamble\n\n" + Self.first + content + Self.rest).utf8)
        let result = parseEverySplit(input)
        #expect(result.error == nil)
        #expect(result.parts.first?.content == Array(content.utf8))
        #expect(result.anomalies == [.dataBefore, .bareLFDelimiter])
    }

    @Test func strictPolicyRefusesAtTheLineFeed() throws {
        let prefix = Self.first + "abc"
        let input = Array((prefix + "\n--b0undary\r\n" + Self.rest).utf8)
        let result = parseEverySplit(input, policy: MultipartPolicy(rejecting: .bareLFDelimiter))
        let error = try #require(result.error)
        #expect(error.reason == .rejectedAnomaly(.bareLFDelimiter))
        #expect(error.offset == Int64(prefix.utf8.count))
    }
}
