import HTTPCore
import MultipartParsing
import Testing

/// The sloppy-but-unambiguous dialects of DESIGN.md: accepted, repaired, and flagged.
@Suite struct DialectTests {
    @Test func canonicalBodyHasNoAnomalies() throws {
        let result = parseEverySplit(
            body(
                """
                --b0undary
                Content-Disposition: form-data; name="a"

                1
                --b0undary--

                """))
        #expect(result.error == nil)
        #expect(result.anomalies == [])
        #expect(result.parts.map(\.content) == [Array("1".utf8)])
    }

    @Test func handWrittenIOSBody() throws {
        // Unquoted parameters, Content-Type inline after ';', Name:value without a space,
        // Content-Transfer-Encoding: binary, a leading CRLF, no final CRLF.
        let input = body(
            """

            --b0undary
            Content-Disposition: form-data; name=file; filename=photo 1.jpg; Content-Type: image/jpeg
            Content-Transfer-Encoding:binary

            \u{FF}\u{D8}
            --b0undary--
            """)
        let result = parseEverySplit(input)
        #expect(result.error == nil)
        let part = try #require(result.parts.first)
        #expect(part.head.nameString == "file")
        #expect(part.head.filenameString == "photo 1.jpg")
        #expect(part.head.contentType?.essence == "image/jpeg")
        #expect(part.content == Array("\u{FF}\u{D8}".utf8))
        #expect(
            result.anomalies == [
                .dataBefore, .unquotedParameter, .inlineContentType, .headerWithoutSpace,
                .contentTransferEncoding, .missingFinalLineBreak,
            ])
    }

    @Test func rawUTF8AndExtendedFilenames() throws {
        let input = body(
            """
            --b0undary
            Content-Disposition: form-data; name="a"; filename="фото.png"

            x
            --b0undary
            Content-Disposition: form-data; name="b"; filename*=UTF-8''%E2%98%83.txt

            y
            --b0undary
            Content-Disposition: form-data; name="c"; filename="caf\u{E9}.txt"; filename*=utf-8''caf%C3%A9.txt

            z
            --b0undary--

            """)
        let result = parseEverySplit(input)
        #expect(result.error == nil)
        #expect(result.parts.map(\.head.filenameString) == ["фото.png", "☃.txt", "café.txt"])
        #expect(result.anomalies == [.extendedFilename])
    }

    @Test func lfOnlyBodyUsedConsistently() throws {
        let input = body(
            """
            --b0undary
            Content-Disposition: form-data; name="a"

            line1
            line2
            --b0undary--

            """, lf: true)
        let result = parseEverySplit(input)
        #expect(result.error == nil)
        #expect(result.parts.first?.content == Array("line1\nline2".utf8))
        #expect(result.anomalies == [.lfLineEndings])
    }

    @Test func transportPaddingAndEpilogue() throws {
        let input = body(
            "--b0undary \t\nContent-Disposition: form-data; name=\"a\"\n\nv\n--b0undary--  \nbye\n")
        let result = parseEverySplit(input)
        #expect(result.error == nil)
        #expect(result.anomalies == [.transportPadding, .dataAfter])
    }

    @Test func preambleIsDiscarded() throws {
        let input = body(
            "This is a preamble.\nIt has two lines.\n--b0undary\nContent-Disposition: form-data; name=\"a\"\n\nv\n--b0undary--\n"
        )
        let result = parseEverySplit(input)
        #expect(result.error == nil)
        #expect(result.parts.count == 1)
        #expect(result.anomalies == [.dataBefore])
    }

    @Test(arguments: [
        "\n--b0undaryX", "\n--b0undary-X", "\n--b0undary\rX", "\n--b0undar", "\r\n--b0undar\r\n",
        "--b0undary--",
        "\r\n--b0undary-", "\r\r\n--b0undary_",
    ])
    func delimiterLookalikesStayData(_ lookalike: String) throws {
        let content = Array("x\(lookalike)Z".utf8)
        var input = body("--b0undary\nContent-Disposition: form-data; name=\"a\"\n\n")
        input += content
        input += body("\n--b0undary--\n")
        let result = parseEverySplit(input)
        #expect(result.error == nil)
        #expect(result.parts.first?.content == content)
    }

    @Test func emptyFormAndEmptyParts() throws {
        #expect(parseEverySplit(body("--b0undary--\n")).parts.isEmpty)
        let result = parseEverySplit(
            body("--b0undary\nContent-Disposition: form-data; name=\"a\"; filename=\"\"\n\n\n--b0undary--\n"))
        #expect(result.error == nil)
        #expect(result.parts.first?.content == [])
        #expect(result.parts.first?.head.isFile == true)
        #expect(result.parts.first?.head.filenameString == "")
    }

    @Test func partHeadExposesHeadersInOrder() throws {
        let result = parseEverySplit(
            body(
                """
                --b0undary
                content-disposition: Form-Data; NAME="a"; FileName="x.bin"
                X-Extra: 1
                Content-Type: Application/Octet-Stream

                v
                --b0undary--

                """))
        let head = try #require(result.parts.first?.head)
        #expect(head.headers.fields.map(\.nameString) == ["content-disposition", "X-Extra", "Content-Type"])
        #expect(head.filenameString == "x.bin")
        #expect(head.contentType?.essence == "application/octet-stream")
        #expect(head.index == 0)
    }
}
