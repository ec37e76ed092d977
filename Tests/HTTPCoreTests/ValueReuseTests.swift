import HTTPCore
import Testing

/// Parameter values read into storage kept from one parse to the next
/// (`ContentDisposition.parse(_:reusing:)`, `MediaType.parse(_:accepting:reusing:)`): each
/// result holds its own value, and a result kept by its caller never changes when the storage
/// is used again.
@Suite struct ValueReuseTests {
    static let dispositions: [(value: String, name: String, filename: String?)] = [
        (
            "form-data; name=\"a-rather-long-field-name\"; filename=\"a-long-file-name.bin\"",
            "a-rather-long-field-name", "a-long-file-name.bin"
        ),
        ("form-data; name=b", "b", nil),
        ("form-data; name=\"c\\\"q\"; filename=\"C:\\\\dir\\\\x.txt\"", "c\"q", "C:\\dir\\x.txt"),
        ("form-data; filename*=UTF-8''%C3%A9.txt; name=\"\"", "", "é.txt"),
        ("form-data; name=\"d\"; filename=\"\"", "d", ""),
    ]

    @Test func aDispositionReadIntoKeptBuffersHoldsItsOwnValues() throws {
        var buffers = ContentDisposition.ValueBuffers()
        var kept: [ContentDisposition] = []
        for (index, item) in Self.dispositions.enumerated() {
            let parsed = try ContentDisposition.parse(Array(item.value.utf8), reusing: &buffers)
            #expect(parsed == (try ContentDisposition.parse(item.value)), "disposition \(index)")
            #expect(parsed.nameString == item.name, "disposition \(index)")
            #expect(parsed.filenameString == item.filename, "disposition \(index)")
            kept.append(parsed)
        }
        // Every earlier result is still what it was when it was made.
        for (index, item) in Self.dispositions.enumerated() {
            #expect(kept[index].nameString == item.name && kept[index].filenameString == item.filename)
        }
    }

    @Test func keptBuffersAreReusedOnceTheirResultIsGone() throws {
        var buffers = ContentDisposition.ValueBuffers()
        var first: ContentDisposition? = try ContentDisposition.parse(
            Array("form-data; name=\"0123456789abcdef\"".utf8), reusing: &buffers)
        let storage = first!.name!.withUnsafeBufferPointer { $0.baseAddress }
        first = nil
        let second = try ContentDisposition.parse(Array("form-data; name=\"fedcba\"".utf8), reusing: &buffers)
        #expect(second.nameString == "fedcba")
        #expect(second.name!.withUnsafeBufferPointer { $0.baseAddress } == storage)
    }

    @Test func aFailedParseLeavesNothingForTheNext() throws {
        var buffers = ContentDisposition.ValueBuffers()
        #expect(throws: HTTPCoreError.self) {
            try ContentDisposition.parse(Array("form-data; name=\"abc\u{1}\"".utf8), reusing: &buffers)
        }
        let parsed = try ContentDisposition.parse(Array("form-data; name=\"x\"".utf8), reusing: &buffers)
        #expect(parsed.nameString == "x" && parsed.filename == nil)
    }

    @Test func aMediaTypeParsedInASparesStorageIsItsOwn() throws {
        let values = [
            "multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW",
            "multipart/form-data; boundary=\"quoted boundary\"; charset=utf-8",
            "multipart/form-data, boundary=b",
            "text/plain",
            "multipart/form-data; charset=utf-8; boundary=last",
        ]
        var spare: MediaType?
        var kept: [MediaType] = []
        for value in values {
            let parsed = try MediaType.parse(
                Array(value.utf8), accepting: .commaSeparatedParameters, reusing: spare.take())
            #expect(parsed == (try MediaType.parse(value, accepting: .commaSeparatedParameters)), "\(value)")
            kept.append(parsed)
            spare = parsed
        }
        // The spares' earlier owners still hold their own parameters.
        for (index, value) in values.enumerated() {
            #expect(kept[index] == (try MediaType.parse(value, accepting: .commaSeparatedParameters)))
        }
        #expect(try kept[0].multipartBoundary() == Array("----WebKitFormBoundary7MA4YWxkTrZu0gW".utf8))
        #expect(try kept[4].multipartBoundary() == Array("last".utf8))
    }

    @Test func aSpareIsRefusedWithTheValueItWasLentTo() throws {
        let spare = try MediaType.parse("multipart/form-data; boundary=kept")
        #expect(throws: HTTPCoreError.self) {
            try MediaType.parse(Array("multipart/form-data; boundary=".utf8), reusing: spare)
        }
        #expect(try spare.multipartBoundary() == Array("kept".utf8))
    }
}
