import Foundation
import HTTPCore
import Testing
import TraceContext

/// The committed inputs of the FuzzTraceParent target (Fuzz/Seeds/FuzzTraceParent and
/// Fuzz/Regressions/FuzzTraceParent), each a `traceparent` value, checked with the harness's
/// properties — bytes and String agree, a parsed value has non-zero ids and formats as version
/// 00 with only the sampled flag, back to the same ids (exactly the input for a version-00
/// value with flags 00 or 01), `init(headers:)` agrees and a repeated field is none — so a
/// regression the fuzzer finds stays fixed in `swift test`, not only in `make fuzz`.
@Suite struct FuzzTraceParentReplayTests {
    static func inputs(_ kind: String) throws -> [(name: String, bytes: [UInt8])] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let directory = root.appendingPathComponent("Fuzz/\(kind)/FuzzTraceParent")
        return try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { !$0.hasPrefix(".") }.sorted()
            .map { ($0, [UInt8](try Data(contentsOf: directory.appendingPathComponent($0)))) }
    }

    /// The harness's properties for one input: what breaks them (empty when none does).
    static func violations(_ bytes: [UInt8]) -> [String] {
        var out: [String] = []
        let parsed = bytes.withUnsafeBytes { TraceParent(parsing: $0) }
        if let text = String(validating: bytes, as: UTF8.self), TraceParent(parsing: text) != parsed {
            out.append("the String and the bytes parse differently")
        }
        if TraceParent(parsing: String(decoding: bytes, as: UTF8.self)) != parsed {
            out.append("the String with U+FFFD for invalid UTF-8 parses differently")
        }
        var headers = HeaderFields()
        headers.append(name: "host", value: "upload.example")
        headers.append(name: Array("Traceparent".utf8), value: bytes)
        headers.append(name: "tracestate", value: "vendor=value")
        if TraceParent(headers: headers) != parsed {
            out.append("the only traceparent field parses differently")
        }
        for second in [bytes, Array("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".utf8)] {
            var repeated = headers
            repeated.append(name: Array("TRACEPARENT".utf8), value: second)
            if TraceParent(headers: repeated) != nil { out.append("a repeated traceparent was read") }
        }
        guard let parsed else { return out }
        if !parsed.traceID.isValid || !parsed.parentID.isValid { out.append("a parsed value with a zero id") }
        let isOWS = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
        let trimmed = Array(bytes.drop(while: isOWS).reversed().drop(while: isOWS).reversed())
        var formatted: [UInt8] = [0x2A]
        parsed.appendHeaderValue(to: &formatted)
        guard formatted.first == 0x2A else { return out + ["appendHeaderValue replaced what was there"] }
        formatted.removeFirst()
        let text = String(decoding: formatted, as: UTF8.self)
        if parsed.description != text { out.append("description differs from appendHeaderValue") }
        let shape = #/00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]/#
        guard formatted.count == 55, text.wholeMatch(of: shape) != nil, trimmed.count >= 55 else {
            return out + ["formatted as \(text)"]
        }
        if formatted[2..<53] != trimmed[2..<53] || formatted[54] != (parsed.sampled ? 0x31 : 0x30) {
            out.append("the formatted ids or flag differ from the input")
        }
        if parsed.version == 0 && parsed.flags <= 1 && formatted != trimmed {
            out.append("a version-00 value with flags 00 or 01 formatted differently")
        }
        let again = formatted.withUnsafeBytes { TraceParent(parsing: $0) }
        if again != TraceParent(traceID: parsed.traceID, parentID: parsed.parentID, sampled: parsed.sampled) {
            out.append("the formatted value parses back to other ids or another sampled flag")
        }
        return out
    }

    @Test func seedsAndRegressionsKeepTheHarnessProperties() throws {
        let seeds = try Self.inputs("Seeds")
        #expect(seeds.count >= 40, "Fuzz/Seeds/FuzzTraceParent holds \(seeds.count) inputs")
        for (name, input) in seeds + (try Self.inputs("Regressions")) {
            #expect(Self.violations(input) == [], "\(name)")
        }
    }

    /// The seeds are what their names say: `valid-…` parses, `invalid-…` does not.
    @Test func seedsAreReadAsTheirNamesSay() throws {
        for (name, input) in try Self.inputs("Seeds") {
            let parsed = input.withUnsafeBytes { TraceParent(parsing: $0) }
            #expect(name.hasPrefix("valid-") || name.hasPrefix("invalid-"), "\(name)")
            #expect((parsed != nil) == name.hasPrefix("valid-"), "\(name)")
        }
        let seeds = Dictionary(uniqueKeysWithValues: try Self.inputs("Seeds"))
        let sampled = try #require(seeds["valid-sampled"]).withUnsafeBytes { TraceParent(parsing: $0) }
        #expect(
            sampled
                == TraceParent(
                    traceID: TraceID(high: 0x4BF9_2F35_77B3_4DA6, low: 0xA3CE_929D_0E0E_4736),
                    parentID: SpanID(0x00F0_67AA_0BA9_02B7), sampled: true))
        let future = try #require(seeds["valid-future-version-extra-fields"]).withUnsafeBytes {
            TraceParent(parsing: $0)
        }
        #expect(future?.version == 0xCC && future?.flags == 1)
        #expect(future?.description == "00-12345678901234567890123456789012-1234567890123456-01")
    }
}
