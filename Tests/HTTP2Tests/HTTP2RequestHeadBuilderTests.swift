import HTTPCore
import Testing

@testable import HTTP2

/// The builder's rules one by one, without libnghttp2 in front of it.
@Suite struct HTTP2RequestHeadBuilderTests {
    static let valid: [(String, String)] = [
        (":method", "POST"), (":scheme", "https"), (":authority", "example.test"), (":path", "/up"),
    ]

    static func build(_ fields: [(String, String)], maxListSize: Int = 1 << 16)
        -> HTTP2RequestHeadBuilder.Outcome
    {
        var builder = HTTP2RequestHeadBuilder(maxListSize: maxListSize)
        for (name, value) in fields {
            Array(name.utf8).withUnsafeBytes { name in
                Array(value.utf8).withUnsafeBytes { value in _ = builder.append(name: name, value: value) }
            }
        }
        return builder.finish()
    }

    @Test func aValidBlockKeepsItsRegularFieldsInOrder() {
        let outcome = Self.build(
            Self.valid + [("content-type", "a/b"), ("cookie", "x=1"), ("cookie", "y=2")])
        let head = HTTP2RequestHead(
            method: "POST", scheme: "https", authority: "example.test", path: "/up",
            fields: HeaderFields([("content-type", "a/b"), ("cookie", "x=1"), ("cookie", "y=2")]))
        #expect(outcome == .head(head))
    }

    @Test func authorityIsOptionalAndTeTrailersIsAllowed() {
        let outcome = Self.build([
            (":method", "GET"), (":scheme", "http"), (":path", "/"), ("te", "trailers"),
        ])
        #expect(
            outcome
                == .head(
                    HTTP2RequestHead(
                        method: "GET", scheme: "http", authority: nil, path: "/",
                        fields: HeaderFields([("te", "trailers")]))))
    }

    @Test(arguments: [
        ([("X-Up", "1")], HTTP2MalformedReason.uppercaseName),
        ([(":Path", "/")], .uppercaseName),
        ([("", "1")], .invalidName),
        ([(":", "1")], .invalidName),
        ([("x y", "1")], .invalidName),
        ([("x", " padded")], .invalidValue),
        ([("x", "padded\t")], .invalidValue),
        ([("x", "a\r\nb")], .invalidValue),
        ([("x", "a\0b")], .invalidValue),
        ([("connection", "close")], .connectionSpecificField),
        ([("keep-alive", "5")], .connectionSpecificField),
        ([("proxy-connection", "x")], .connectionSpecificField),
        ([("transfer-encoding", "chunked")], .connectionSpecificField),
        ([("upgrade", "h2c")], .connectionSpecificField),
        ([("te", "gzip")], .teNotTrailers),
        ([("te", "trailers, gzip")], .teNotTrailers),
        ([(":protocol", "websocket")], .unknownPseudoHeader),
        ([(":status", "200")], .responsePseudoHeader),
        ([("accept", "*/*"), (":foo", "x")], .pseudoHeaderAfterField),
        ([(":method", "GET")], .duplicatePseudoHeader),
        ([(":path", "/again")], .duplicatePseudoHeader),
        ([(":authority", "other")], .duplicatePseudoHeader),
    ])
    func aBrokenRuleIsTheReason(extra: [(String, String)], reason: HTTP2MalformedReason) {
        #expect(Self.build(Self.valid + extra) == .malformed(reason))
    }

    @Test func aPseudoHeaderAfterARegularFieldIsRefusedEvenIfKnown() {
        let fields = [(":method", "GET"), (":scheme", "https"), ("accept", "*/*"), (":path", "/")]
        #expect(Self.build(fields) == .malformed(.pseudoHeaderAfterField))
    }

    @Test(arguments: [":method", ":scheme", ":path"])
    func aMissingOrEmptyPseudoHeaderIsRefused(name: String) {
        #expect(Self.build(Self.valid.filter { $0.0 != name }) == .malformed(.missingPseudoHeader))
        #expect(
            Self.build(Self.valid.map { $0.0 == name ? ($0.0, "") : $0 }) == .malformed(.missingPseudoHeader))
    }

    @Test func connectIsRefusedWithOrWithoutAPath() {
        #expect(Self.build([(":method", "CONNECT"), (":authority", "x:443")]) == .malformed(.connectMethod))
        #expect(
            Self.build(Self.valid.map { $0.0 == ":method" ? ($0.0, "CONNECT") : $0 })
                == .malformed(.connectMethod))
    }

    @Test func aPathMustBeOriginFormOrAnAsteriskForOptions() {
        let absolute = Self.valid.map { $0.0 == ":path" ? ($0.0, "https://example.test/") : $0 }
        #expect(Self.build(absolute) == .malformed(.invalidPath))
        let asterisk = Self.valid.map { $0.0 == ":path" ? ($0.0, "*") : $0 }
        #expect(Self.build(asterisk) == .malformed(.invalidPath))
        let options = asterisk.map { $0.0 == ":method" ? ($0.0, "OPTIONS") : $0 }
        guard case .head(let head) = Self.build(options) else {
            Issue.record("OPTIONS * refused")
            return
        }
        #expect(head.path == "*")
    }

    /// RFC 9113 §6.5.2: name + value + 32 per field; the limit itself still passes.
    @Test func theListSizeCountsThirtyTwoBytesPerField() {
        let base = Self.valid.reduce(0) { $0 + $1.0.utf8.count + $1.1.utf8.count + 32 }
        let field = ("x-pad", String(repeating: "p", count: 100))
        let withField = base + 5 + 100 + 32
        guard case .head = Self.build(Self.valid + [field], maxListSize: withField) else {
            Issue.record("the exact limit was refused")
            return
        }
        #expect(Self.build(Self.valid + [field], maxListSize: withField - 1) == .tooLarge)
    }

    @Test func aHostMustNameTheAuthority() {
        guard case .head(let head) = Self.build(Self.valid + [("host", "EXAMPLE.test")]) else {
            Issue.record("a host equal to :authority but for case was refused")
            return
        }
        #expect(head.fields.first("host") == Array("EXAMPLE.test".utf8))
        #expect(Self.build(Self.valid + [("host", "other.test")]) == .malformed(.hostDiffersFromAuthority))
        let twice = Self.valid + [("host", "example.test"), ("host", "example.test")]
        #expect(Self.build(twice) == .malformed(.hostDiffersFromAuthority))
        let withoutAuthority = Self.valid.filter { $0.0 != ":authority" } + [("host", "other.test")]
        guard case .head = Self.build(withoutAuthority) else {
            Issue.record("host without :authority was refused")
            return
        }
    }

    @Test func theFirstBrokenRuleWins() {
        let outcome = Self.build(Self.valid + [("te", "gzip"), ("X-Up", "1")])
        #expect(outcome == .malformed(.teNotTrailers))
    }

    /// Past the limit a field is counted, not checked: the verdict is 431 whatever it holds.
    @Test func pastTheLimitFieldsAreOnlyCounted() {
        let big = ("x-big", String(repeating: "b", count: 200))
        #expect(Self.build(Self.valid + [big, ("X-Up", "1")], maxListSize: 300) == .tooLarge)
        // Before the limit the same field is still refused.
        #expect(
            Self.build(Self.valid + [("X-Up", "1"), big], maxListSize: 300) == .malformed(.uppercaseName))
    }

    /// The decoding bound is twice the limit: up to it the block is decoded on (and answered
    /// 431), one byte past it the caller stops.
    @Test func theDecodingBoundIsTwiceTheLimit() {
        let limit = 1000
        var builder = HTTP2RequestHeadBuilder(maxListSize: limit)
        func append(_ size: Int) {
            let value = [UInt8](repeating: 0x76, count: size - 1 - 32)
            Array("x".utf8).withUnsafeBytes { name in
                value.withUnsafeBytes { value in _ = builder.append(name: name, value: value) }
            }
        }
        append(limit)
        #expect(!builder.isTooLarge && !builder.exceedsDecodingBound)
        append(limit)
        #expect(builder.isTooLarge && !builder.exceedsDecodingBound)
        append(33)
        #expect(builder.exceedsDecodingBound)
        #expect(builder.finish() == .tooLarge)
        #expect(!HTTP2RequestHeadBuilder(maxListSize: .max).exceedsDecodingBound)
    }
}
