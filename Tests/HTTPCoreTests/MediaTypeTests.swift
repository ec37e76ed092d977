import HTTPCore
import Testing

@Suite struct MediaTypeTests {
    @Test func parsesTypeSubtypeAndParameters() throws {
        let type = try MediaType.parse("Multipart/Form-Data; Boundary=\"a b\\\"c\"; charset=UTF-8")
        #expect(type.essence == "multipart/form-data")
        #expect(type.isMultipartFormData)
        #expect(type.parameter("boundary") == Array("a b\"c".utf8))
        #expect(type.parameter("CHARSET") == Array("UTF-8".utf8))
        #expect(type.description == "multipart/form-data; boundary=\"a b\\\"c\"; charset=UTF-8")
    }

    @Test func boundaryValidation() throws {
        #expect(
            try MediaType.parse("multipart/form-data; boundary=----WebKitFormBoundaryx").multipartBoundary()
                == Array("----WebKitFormBoundaryx".utf8))
        #expect(throws: HTTPCoreError.self) { try MediaType.parse("multipart/form-data").multipartBoundary() }
        #expect(throws: HTTPCoreError.self) {
            try MediaType.parse("multipart/form-data; boundary=\"\"").multipartBoundary()
        }
        #expect(throws: HTTPCoreError.self) {
            try MediaType.parse("multipart/form-data; boundary=\"\(String(repeating: "x", count: 71))\"")
                .multipartBoundary()
        }
        #expect(throws: HTTPCoreError.self) {
            try MediaType.parse("multipart/form-data; boundary=\"a@b\"").multipartBoundary()
        }
    }

    @Test(arguments: [
        ("", HTTPCoreError.Reason.empty),
        ("text", .invalidMediaType),
        ("text/", .invalidMediaType),
        ("/plain", .invalidMediaType),
        ("text/plain; charset", .invalidParameter),
        ("text/plain; charset = utf-8", .invalidParameter),
        ("text/plain; charset=\"utf-8", .unterminatedQuotedString),
        ("text/plain; charset=\"utf-8\"x", .junkAfterValue),
        ("multipart/form-data; boundary=a; boundary=b", .duplicateParameter("boundary")),
        ("multipart/form-data; BOUNDARY=a; boundary=b", .duplicateParameter("boundary")),
        ("multipart/form-data, boundary=a", .junkAfterValue),
        ("text/plain; a=\"x\u{1}\"", .controlCharacter),
        ("multipart/form-data; boundary=\\/\\/", .invalidParameter),
    ])
    func refusesMalformed(_ value: String, _ reason: HTTPCoreError.Reason) {
        #expect(throws: HTTPCoreError.self) { try MediaType.parse(value) }
        do {
            _ = try MediaType.parse(value)
        } catch {
            #expect(error.reason == reason)
        }
    }

    @Test func toleratesWhitespaceAndEmptyParameters() throws {
        let type = try MediaType.parse("  text/plain ;; charset=utf-8 ;  ")
        #expect(type.essence == "text/plain")
        #expect(type.parameters.count == 1)
    }

    @Test func wildcardMatching() throws {
        let png = try MediaType.parse("image/png")
        #expect(png.matches("image/*"))
        #expect(png.matches("*/*"))
        #expect(png.matches("IMAGE/PNG"))
        #expect(!png.matches("image/jpeg"))
        #expect(!png.matches("text/*"))
        #expect(!png.matches("*/png"))
    }
}
