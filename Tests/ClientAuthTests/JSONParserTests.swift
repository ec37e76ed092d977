import ClientAuth
import Testing

@Suite struct JSONParserTests {
    func parse(_ text: String, parser: JSONParser = JSONParser()) throws(JSONError) -> JSONValue {
        try parser.parse(Array(text.utf8))
    }

    func failure(_ text: String, parser: JSONParser = JSONParser()) -> JSONError? {
        do throws(JSONError) {
            _ = try parser.parse(Array(text.utf8))
            return nil
        } catch {
            return error
        }
    }

    @Test func readsEveryKindOfValue() throws {
        let value = try parse(#" { "a" : [1, -2.5e3, true, false, null, "x"], "b": {}, "c": [] } "#)
        let object = try #require(value.objectValue)
        #expect(object.members.map(\.name) == ["a", "b", "c"])
        let list = try #require(object["a"]?.arrayValue)
        #expect(list.count == 6)
        #expect(list[0].numberValue?.literal == "1")
        #expect(list[1].numberValue?.doubleValue == -2500)
        #expect(list[1].numberValue?.literal == "-2.5e3")
        #expect(list[2] == .bool(true))
        #expect(list[3] == .bool(false))
        #expect(list[4] == .null)
        #expect(list[5] == .string("x"))
        #expect(object["b"] == .object(JSONObject()))
        #expect(object["c"] == .array([]))
        #expect(object["d"] == nil)
    }

    @Test func resolvesEveryEscape() throws {
        let value = try parse(#""\" \\ \/ \b \f \n \r \t \u0041 \u00e9 \u20AC \ud83d\ude00""#)
        #expect(value == .string("\" \\ / \u{08} \u{0C} \n \r \t A é € 😀"))
    }

    @Test func keepsUTF8AndEscapesTogether() throws {
        #expect(try parse("\"ü\\n€\"") == .string("ü\n€"))
        #expect(try parse("\"日本\"") == .string("日本"))
    }

    @Test(arguments: [
        (#""\ud83d""#, JSONError.Reason.unpairedSurrogate),
        (#""\ude00""#, .unpairedSurrogate),
        (#""\ud83d\u0041""#, .unpairedSurrogate),
        (#""\ud83dx""#, .unpairedSurrogate),
        (#""\x""#, .invalidEscape),
        (#""\u12G4""#, .invalidEscape),
        (#""\u12""#, .unexpectedEnd),
        ("\"a\u{01}b\"", .controlCharacter),
        ("\"tab\there\"", .controlCharacter),
        ("\"abc", .unexpectedEnd),
        ("\"a\\", .unexpectedEnd),
    ])
    func refusesBadStrings(_ input: String, _ reason: JSONError.Reason) {
        #expect(failure(input)?.reason == reason)
    }

    @Test func refusesInvalidUTF8() throws {
        for bytes: [UInt8] in [
            [0x22, 0xC3, 0x22],  // truncated two-byte sequence
            [0x22, 0xC0, 0xAF, 0x22],  // overlong "/"
            [0x22, 0xED, 0xA0, 0x80, 0x22],  // a UTF-16 surrogate encoded in UTF-8
            [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
            [0x22, 0xFF, 0x22],
            [0x22, 0x5C, 0x6E, 0xE2, 0x82, 0x22],  // after an escape, a truncated €
        ] {
            #expect(throws: JSONError(.invalidUTF8, at: 0)) { try JSONParser().parse(bytes) }
        }
    }

    @Test(arguments: [
        "01", "-", "1.", ".5", "+1", "1e", "1e+", "--1", "0x10", "1.2.3", "-01", "NaN", "Infinity",
    ])
    func refusesBadNumbers(_ input: String) {
        let reason = failure(input)?.reason
        #expect(
            reason == .invalidNumber || reason == .unexpectedByte || reason == .trailingBytes,
            "\(input): \(String(describing: reason))")
    }

    @Test(arguments: ["0", "-0", "10", "1.5", "1e10", "1E-2", "-12.5e+3", "123456789012345678901234567890"])
    func acceptsNumbers(_ input: String) throws {
        #expect(try parse(input).numberValue?.literal == input)
        #expect(JSONNumber(literal: input) != nil)
    }

    @Test func numericDatesFloorFractionsAndRefuseHugeValues() throws {
        #expect(JSONNumber(literal: "1516239022")?.numericDate == 1_516_239_022)
        #expect(JSONNumber(literal: "1516239022.9")?.numericDate == 1_516_239_022)
        #expect(JSONNumber(literal: "-1.5")?.numericDate == -2)
        // A date past Int64 seconds (or infinity: 1e400) is no date: exp would never expire.
        #expect(JSONNumber(literal: "1e300") != nil && JSONNumber(literal: "1e300")?.numericDate == nil)
        #expect(JSONNumber(literal: "1e400")?.numericDate == nil)
        #expect(JSONNumber(literal: "-1e19")?.numericDate == nil)
        #expect(JSONNumber(literal: "9.1e18")?.numericDate == 9_100_000_000_000_000_000)
        #expect(JSONNumber(literal: "9007199254740993")?.numericDate == 9_007_199_254_740_993)
        #expect(JSONNumber(literal: "01") == nil)
    }

    @Test func refusesDuplicateNames() {
        #expect(failure(#"{"a":1,"a":2}"#) == JSONError(.duplicateName, at: 7))
        // Past sixteen members the parser switches to a set: still refused.
        let many = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        #expect(failure("{\(many),\"k3\":0}")?.reason == .duplicateName)
        #expect(failure("{\(many),\"k39\":0}")?.reason == .duplicateName)
        #expect(failure("{\(many)}") == nil)
        // Names equal after escapes are the same name.
        #expect(failure(#"{"a":1,"\u0061":2}"#)?.reason == .duplicateName)
    }

    @Test(arguments: [
        ("", JSONError.Reason.unexpectedEnd), ("   ", .unexpectedEnd), ("{", .unexpectedEnd),
        ("[1,", .unexpectedEnd),
        ("[1,]", .unexpectedByte), ("{\"a\":1,}", .unexpectedByte), ("{\"a\" 1}", .unexpectedByte),
        ("{a:1}", .unexpectedByte), ("[1 2]", .unexpectedByte), ("tru", .unexpectedEnd),
        ("nul", .unexpectedEnd),
        ("True", .unexpectedByte), ("{} {}", .trailingBytes), ("1 2", .trailingBytes),
        ("'a'", .unexpectedByte),
        ("[1]x", .trailingBytes), ("{\"a\":}", .unexpectedByte), ("\u{FEFF}{}", .unexpectedByte),
    ])
    func refusesMalformedDocuments(_ input: String, _ reason: JSONError.Reason) {
        #expect(failure(input)?.reason == reason, "\(input)")
    }

    @Test func limitsDepth() {
        let parser = JSONParser(maximumDepth: 4)
        #expect(failure("[[[[1]]]]", parser: parser) == nil)
        #expect(failure("[[[[[1]]]]]", parser: parser) == JSONError(.tooDeep, at: 4))
        #expect(failure(#"{"a":{"b":{"c":{"d":{}}}}}"#, parser: parser)?.reason == .tooDeep)
        // The default limit stops a hostile nesting long before the stack would.
        #expect(failure(String(repeating: "[", count: 100_000))?.reason == .tooDeep)
    }

    @Test func limitsSize() {
        let parser = JSONParser(maximumBytes: 8)
        #expect(failure("[1,2,3]", parser: parser) == nil)
        #expect(failure("[1,2,3,4]", parser: parser)?.reason == .tooLarge)
    }

    @Test func errorsCarryTheOffset() {
        #expect(failure(#"{"a": [1, 2, x]}"#) == JSONError(.unexpectedByte, at: 13))
        #expect(failure(#"{"a": "b\q"}"#) == JSONError(.invalidEscape, at: 8))
        #expect(String(describing: JSONError(.invalidNumber, at: 3)) == "invalid number at byte 3")
    }

    @Test func parsesNonContiguousInput() throws {
        let bytes = Array(#"{"a":[true]}"#.utf8)
        #expect(try JSONParser().parse(bytes.lazy.map { $0 }) == (try JSONParser().parse(bytes)))
    }
}
