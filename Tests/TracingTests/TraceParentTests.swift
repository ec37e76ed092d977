import HTTPCore
import Testing
import TraceContext
import Tracing

/// `traceparent` against W3C Trace Context Level 1 and the vectors of its test suite
/// (w3c/trace-context, test/test.py).
@Suite struct TraceParentTests {
    static let trace = "12345678901234567890123456789012"
    static let parent = "1234567890123456"

    @Test(arguments: [
        ("00-\(trace)-\(parent)-01", UInt8(0), UInt8(1)),
        ("00-\(trace)-\(parent)-00", 0, 0),
        ("00-\(trace)-\(parent)-ff", 0, 0xFF),
        // A later version is read by its first four fields, with or without more after `-`.
        ("cc-\(trace)-\(parent)-01", 0xCC, 1),
        ("cc-\(trace)-\(parent)-01-what-the-future-will-be-like", 0xCC, 1),
        ("01-\(trace)-\(parent)-09-", 1, 9),
        // Optional whitespace around the value (HTTP OWS).
        (" 00-\(trace)-\(parent)-01", 0, 1),
        ("\t00-\(trace)-\(parent)-01", 0, 1),
        ("00-\(trace)-\(parent)-01 ", 0, 1),
        ("\t 00-\(trace)-\(parent)-01 \t", 0, 1),
    ])
    func valid(_ value: String, version: UInt8, flags: UInt8) throws {
        let parsed = try #require(TraceParent(parsing: value), "\(value)")
        #expect(parsed.version == version && parsed.flags == flags)
        #expect(parsed.traceID.description == Self.trace && parsed.parentID.description == Self.parent)
        #expect(parsed.sampled == (flags & 1 == 1))
        #expect(parsed.traceID == TraceID(high: 0x1234_5678_9012_3456, low: 0x7890_1234_5678_9012))
        #expect(parsed.parentID == SpanID(0x1234_5678_9012_3456))
    }

    @Test(arguments: [
        "",
        "00",
        // Version: not hex, too short, too long, the forbidden ff, upper case.
        ".0-\(trace)-\(parent)-01", "0.-\(trace)-\(parent)-01", "0-\(trace)-\(parent)-01",
        "000-\(trace)-\(parent)-01", "0000-\(trace)-\(parent)-01", "ff-\(trace)-\(parent)-01",
        "CC-\(trace)-\(parent)-01",
        // Version 00 has exactly four fields; a later version needs `-` after its flags.
        "00-\(trace)-\(parent)-01.", "00-\(trace)-\(parent)-01-what-the-future-will-be-like",
        "cc-\(trace)-\(parent)-01.what-the-future-will-be-like",
        // Trace id: all zero, not hex, upper case, too long, too short.
        "00-00000000000000000000000000000000-\(parent)-01",
        "00-.2345678901234567890123456789012-\(parent)-01",
        "00-1234567890123456789012345678901.-\(parent)-01",
        "00-ABCDEF78901234567890123456789012-\(parent)-01",
        "00-123456789012345678901234567890123-\(parent)-01",
        "00-1234567890123456789012345678901-\(parent)-01",
        // Parent id: all zero, not hex, upper case, too long, too short.
        "00-\(trace)-0000000000000000-01", "00-\(trace)-.234567890123456-01",
        "00-\(trace)-123456789012345.-01",
        "00-\(trace)-ABCDEF7890123456-01", "00-\(trace)-12345678901234567-01",
        "00-\(trace)-123456789012345-01",
        // Flags: not hex, upper case, too long, too short.
        "00-\(trace)-\(parent)-.0", "00-\(trace)-\(parent)-0.", "00-\(trace)-\(parent)-0A",
        "00-\(trace)-\(parent)-001", "00-\(trace)-\(parent)-1",
        // Separators other than `-`, and whitespace inside.
        "00_\(trace)-\(parent)-01", "00-\(trace)_\(parent)-01", "00-\(trace)-\(parent)_01",
        "00-\(trace) -\(parent)-01",
    ])
    func invalid(_ value: String) {
        #expect(TraceParent(parsing: value) == nil, "\(value)")
        let bytes = Array(value.utf8)
        #expect(bytes.withUnsafeBytes { TraceParent(parsing: $0) } == nil, "\(value) as bytes")
    }

    @Test func formatsVersion00WithOnlyTheSampledFlag() throws {
        let made = TraceParent(
            traceID: TraceID(high: 0x4BF9_2F35_77B3_4DA6, low: 0xA3CE_929D_0E0E_4736),
            parentID: SpanID(0x00F0_67AA_0BA9_02B7), sampled: true)
        #expect(made.description == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        var unsampled = made
        unsampled.flags = 0
        #expect(unsampled.description == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
        // A later version and unknown flags are written back as version 00 and the sampled bit.
        let future = try #require(TraceParent(parsing: "cc-\(Self.trace)-\(Self.parent)-0b-more"))
        #expect(future.description == "00-\(Self.trace)-\(Self.parent)-01")
        #expect(TraceParent(parsing: made.description) == made)
        var bytes: [UInt8] = []
        made.appendHeaderValue(to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == made.description)
    }

    @Test func aRequestHasOneTraceparentOrNone() throws {
        let value = "00-\(Self.trace)-\(Self.parent)-01"
        let one = try #require(TraceParent(headers: HeaderFields([("Host", "a"), ("TraceParent", value)])))
        #expect(one.description == value, "field names compare without case")
        #expect(TraceParent(headers: HeaderFields([("Host", "a")])) == nil)
        // Two fields, even equal ones, restart the trace (W3C test suite: traceparent duplicated).
        #expect(TraceParent(headers: HeaderFields([("traceparent", value), ("traceparent", value)])) == nil)
        #expect(
            TraceParent(headers: HeaderFields([("traceparent", "00-\(Self.trace)-\(Self.parent)")])) == nil)
    }

    @Test func idsParseOnlyLowerCaseHexOfTheirLength() {
        #expect(TraceID(hex: Array(Self.trace.utf8))?.description == Self.trace)
        #expect(
            TraceID(hex: Array(Self.trace.uppercased().replacingOccurrences(of: "1", with: "A").utf8)) == nil)
        #expect(TraceID(hex: Array("abc".utf8)) == nil)
        #expect(SpanID(hex: Array("00f067aa0ba902b7".utf8)) == SpanID(0x00F0_67AA_0BA9_02B7))
        #expect(SpanID(hex: Array("00F067AA0BA902B7".utf8)) == nil)
        #expect(SpanID(hex: Array("0000000000000000".utf8))?.isValid == false)
        #expect(TraceID(high: 0, low: 1).description == "00000000000000000000000000000001")
    }
}
