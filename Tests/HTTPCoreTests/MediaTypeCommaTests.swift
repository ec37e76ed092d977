import HTTPCore
import Testing

/// `multipart/form-data, boundary=x` (RFC 1867 §6, iOS tutorials): accepted only when the
/// caller asks, flagged, and still strict about every parameter.
@Suite struct MediaTypeCommaTests {
    @Test(arguments: [
        "multipart/form-data, boundary=abcde", "multipart/form-data,boundary=abcde",
        "multipart/form-data , boundary=\"abcde\"", "multipart/form-data, boundary=abcde, charset=utf-8",
    ])
    func commaBeforeParametersIsAcceptedWhenAsked(_ value: String) throws {
        #expect(throws: HTTPCoreError.self) { try MediaType.parse(value) }
        let type = try MediaType.parse(value, accepting: .commaSeparatedParameters)
        #expect(type.isMultipartFormData)
        #expect(try type.multipartBoundary() == Array("abcde".utf8))
        #expect(type.anomalies == .commaSeparatedParameters)
    }

    @Test func semicolonsAreNotFlagged() throws {
        let type = try MediaType.parse(
            "multipart/form-data; boundary=abcde", accepting: .commaSeparatedParameters)
        #expect(type.anomalies == [])
        #expect(type == MediaType(type: "multipart", subtype: "form-data", parameters: type.parameters))
    }

    @Test(arguments: [
        ("multipart/form-data, boundary=a, boundary=b", HTTPCoreError.Reason.duplicateParameter("boundary")),
        ("multipart/form-data; boundary=a, BOUNDARY=b", .duplicateParameter("boundary")),
        ("multipart/form-data, text/plain", .invalidParameter),
        ("multipart/form-data, boundary=a,b", .invalidParameter),
        ("multipart/form-data,, boundary=a", .invalidParameter),
        ("multipart/form-data, boundary", .invalidParameter),
    ])
    func ambiguityStaysRefused(_ value: String, _ reason: HTTPCoreError.Reason) {
        #expect {
            try MediaType.parse(value, accepting: .commaSeparatedParameters)
        } throws: { error in
            (error as? HTTPCoreError)?.reason == reason
        }
    }
}
