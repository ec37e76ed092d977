import HTTPCore
import Testing

@Suite struct ContentDispositionTests {
    func parse(_ value: String) throws -> ContentDisposition {
        try ContentDisposition.parse(value)
    }

    @Test func quotedValuesAndEscapes() throws {
        let disposition = try parse(#"form-data; name="a\"b"; filename="C:\Users\x\a\\b.txt""#)
        #expect(disposition.type == "form-data")
        #expect(disposition.nameString == "a\"b")
        // Browsers send backslashes raw: only \" and \\ are escapes.
        #expect(disposition.filenameString == #"C:\Users\x\a\b.txt"#)
        #expect(disposition.anomalies == [])
    }

    @Test func unquotedValuesAreFlagged() throws {
        let disposition = try parse("form-data; name=file; filename=my photo.jpg ")
        #expect(disposition.nameString == "file")
        #expect(disposition.filenameString == "my photo.jpg")
        #expect(disposition.anomalies == [.unquotedValue])
    }

    @Test func extendedFilename() throws {
        #expect(
            try parse("form-data; name=\"f\"; filename*=UTF-8''n%C3%A4me.txt").filenameString == "näme.txt")
        #expect(
            try parse("form-data; name=\"f\"; filename*=iso-8859-1'en'n%E4me.txt").filenameString
                == "näme.txt")
        let both = try parse("form-data; name=\"f\"; filename=\"näme.txt\"; filename*=UTF-8''n%C3%A4me.txt")
        #expect(both.filenameString == "näme.txt")
        #expect(both.anomalies == [.extendedFilename])
    }

    @Test(arguments: [
        (
            "form-data; name=\"f\"; filename=\"a.jpg\"; filename*=UTF-8''a.php",
            HTTPCoreError.Reason.filenameMismatch
        ),
        ("form-data; name=\"f\"; filename*=UTF-8''%ZZ", .invalidExtendedValue),
        ("form-data; name=\"f\"; filename*=UTF-8''%C3", .invalidExtendedValue),
        ("form-data; name=\"f\"; filename*=UTF-8''a%0D%0AX-Injected%3A%201", .controlCharacter),
        ("form-data; name=\"f\"; filename*=UTF-8''a%00.php", .controlCharacter),
        ("form-data; name=\"f\"; filename*=iso-8859-1''%1Dx", .controlCharacter),
        ("form-data; name=\"f\"; filename*=koi8-r''x", .invalidExtendedValue),
        ("form-data; name=\"f\"; filename*=\"UTF-8''x\"", .invalidExtendedValue),
        ("form-data; name=\"f\"; filename*=UTF-8''a b", .invalidExtendedValue),
        ("form-data; name=\"a\"; name=\"b\"", .duplicateParameter("name")),
        ("form-data; name=\"a\"; Name=\"b\"", .duplicateParameter("name")),
        ("form-data; name=\"a\"; filename=\"x\" y", .junkAfterValue),
        ("form-data; name=\"a", .unterminatedQuotedString),
        ("form-data; name=a\"b", .invalidParameter),
        ("form-data; name=\"a\u{0}\"", .controlCharacter),
        ("form-data; name=\"a\"; X-Other: 1", .invalidParameter),
        ("form-data; =x", .invalidParameter),
        ("", .empty),
    ])
    func refusesAmbiguous(_ value: String, _ reason: HTTPCoreError.Reason) {
        do {
            _ = try ContentDisposition.parse(value)
            Issue.record("accepted \(value)")
        } catch {
            #expect(error.reason == reason)
        }
    }

    @Test func inlineContentTypeAndJunk() throws {
        let inline = try parse("form-data; name=\"f\"; filename=\"a.jpg\"; Content-Type: image/jpeg")
        #expect(inline.inlineContentType == Array("image/jpeg".utf8))
        #expect(inline.anomalies == [.inlineContentType])
        let junk = try parse("form-data; name=\"f\"; junk; ")
        #expect(junk.nameString == "f")
        #expect(junk.anomalies == [.ignoredJunk])
    }

    @Test func decoyInsideAQuotedValue() throws {
        let disposition = try parse(#"form-data; name="x; filename=\"evil.php\""; filename="ok.png""#)
        #expect(disposition.nameString == #"x; filename="evil.php""#)
        #expect(disposition.filenameString == "ok.png")
    }

    @Test func serializesLikeBrowsers() throws {
        let disposition = ContentDisposition(
            name: Array("a\"b\r\nc".utf8), filename: Array("фото \\ \"x\".png".utf8))
        #expect(
            String(decoding: disposition.serialized, as: UTF8.self)
                == #"form-data; name="a%22b%0D%0Ac"; filename="фото \\ %22x%22.png""#)
        let reparsed = try ContentDisposition.parse(disposition.serialized)
        #expect(reparsed.filenameString == "фото \\ %22x%22.png")
        #expect(!String(decoding: disposition.serialized, as: UTF8.self).contains("filename*"))
    }

    @Test func serializationRoundTripsBackslashes() throws {
        for name in [#"\"#, #"a\\b"#, #"\\server\share"#, #"x\"#] {
            let serialized = ContentDisposition(name: name, filename: name).serialized
            let reparsed = try ContentDisposition.parse(serialized)
            #expect(reparsed.nameString == name)
            #expect(reparsed.filenameString == name)
        }
    }
}
