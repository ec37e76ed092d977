import Foundation
import HTTPCore
import Testing
import TraceContext
import Tracing

/// The encoder's output read back by OpenTelemetry's own protobuf bindings (opentelemetry-proto
/// under the SDK venv's python): every field must arrive as written.
@Suite struct OTLPJSONTests {
    static let seed: UInt64 = 0x07E1_F00D

    /// A string with everything JSON must escape, and characters it must keep.
    static let awkward =
        "quote \" backslash \\ slash / newline \n tab \t cr \r nul \u{0} bell \u{7} del \u{7F} é 日本 🚀"

    /// Spans of every kind, with attributes of every type, events and each status.
    static func spans() -> [Span] {
        var random = SplitMix64(seed: seed)
        let client = TraceParent(parsing: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")!
        let serverContext = Sampler(ratio: 1).serverContext(incoming: client, using: &random)
        var server = Span(
            context: serverContext, name: "POST /upload", kind: .server,
            startTimeUnixNano: 1_764_950_400_123_456_789)
        server.endTimeUnixNano = 1_764_950_401_987_654_321
        server.set("http.request.method", .string("POST"))
        server.set("http.response.status_code", .int(201))
        server.set("formgate.route", .string("uploads"))
        server.set("formgate.parts", .int(3))
        server.set("formgate.bytes_in", .int(Int64.max))
        server.set("formgate.negative", .int(Int64.min))
        server.set("formgate.ratio", .double(0.1))
        server.set("formgate.big", .double(1e300))
        server.set("formgate.tiny", .double(-2.5e-7))
        server.set("formgate.whole", .double(3))
        server.set("formgate.nan", .double(.nan))
        server.set("formgate.infinity", .double(.infinity))
        server.set("formgate.minus_infinity", .double(-.infinity))
        server.set("formgate.scan.clean", .bool(true))
        server.set("formgate.strip.changed", .bool(false))
        server.set("formgate.filename", .string(awkward))
        server.set("formgate.raw_filename", .string(utf8: [0x61, 0xFF, 0x62, 0xC3]))
        server.addEvent("request.first_byte", at: 1_764_950_400_123_456_790)
        server.addEvent(
            "request.last_byte", at: 1_764_950_401_000_000_000,
            attributes: [SpanAttribute("bytes", .int(1_048_576)), SpanAttribute("note", .string(awkward))])
        server.status = .error(message: "upstream said \"no\"\n")

        var upstream = Span(
            context: serverContext.child(using: &random), name: "POST", kind: .client,
            startTimeUnixNano: 1_764_950_400_200_000_000)
        upstream.endTimeUnixNano = .max
        upstream.set("server.address", .string("127.0.0.1"))
        upstream.status = .ok

        let root = Sampler(ratio: 1).serverContext(incoming: nil, using: &random)
        let inside = Span(context: root, name: awkward, kind: .internal, startTimeUnixNano: 0)
        return [server, upstream, inside]
    }

    @Test func openTelemetryReadsEveryField() throws {
        let spans = Self.spans()
        let body = OTLPJSON.encode(spans: spans, serviceName: "formgate \"edge\"", version: "0.1.0")
        let (errors, decoded) = try decodeWithOpenTelemetry(body)
        #expect(errors.isEmpty, "seed \(Self.seed): \(errors)\n\(String(decoding: body, as: UTF8.self))")
        let request = try #require(decoded)
        let resources = try #require(request["resources"] as? [[String: Any]])
        try #require(resources.count == 1)
        #expect(
            Self.attributes(resources[0]["attributes"]) == [
                ["service.name", "string_value", "formgate \"edge\""],
                ["service.version", "string_value", "0.1.0"],
                ["telemetry.sdk.name", "string_value", "formgate"],
                ["telemetry.sdk.language", "string_value", "swift"],
                ["telemetry.sdk.version", "string_value", "0.1.0"],
            ])
        let scopes = try #require(resources[0]["scopes"] as? [[String: Any]])
        try #require(scopes.count == 1)
        #expect(scopes[0]["name"] as? String == "formgate" && scopes[0]["version"] as? String == "0.1.0")
        let read = try #require(scopes[0]["spans"] as? [[String: Any]])
        try #require(read.count == spans.count)
        for (span, got) in zip(spans, read) {
            #expect(got["traceId"] as? String == span.traceID.description)
            #expect(got["spanId"] as? String == span.spanID.description)
            #expect(got["parentSpanId"] as? String == (span.parentSpanID?.description ?? ""))
            #expect(got["name"] as? String == span.name)
            #expect(got["kind"] as? Int == span.kind.rawValue)
            #expect(got["start"] as? String == String(span.startTimeUnixNano))
            #expect(got["end"] as? String == String(span.endTimeUnixNano))
            Self.expectSame(got["attributes"], span.attributes, span.name)
            let events = got["events"] as? [[String: Any]] ?? []
            #expect(events.count == span.events.count)
            for (event, gotEvent) in zip(span.events, events) {
                #expect(gotEvent["name"] as? String == event.name)
                #expect(gotEvent["time"] as? String == String(event.timeUnixNano))
                Self.expectSame(gotEvent["attributes"], event.attributes, event.name)
            }
            let status = got["status"] as? [String: Any] ?? [:]
            switch span.status {
            case .unset:
                #expect(got["hasStatus"] as? Bool == false)
            case .ok:
                #expect(status["code"] as? Int == 1)
            case .error(let message):
                #expect(status["code"] as? Int == 2 && status["message"] as? String == message)
            }
        }
    }

    @Test func theRawJSONHasHexIdsAndDecimalStrings() throws {
        let spans = Self.spans()
        let body = OTLPJSON.encode(spans: spans, serviceName: "formgate", version: "0.1.0")
        let document = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        let resourceSpans = try #require(document?["resourceSpans"] as? [[String: Any]])
        let scopeSpans = try #require(resourceSpans.first?["scopeSpans"] as? [[String: Any]])
        let raw = try #require(scopeSpans.first?["spans"] as? [[String: Any]])
        for (span, json) in zip(spans, raw) {
            let traceID = try #require(json["traceId"] as? String)
            #expect(traceID.count == 32 && traceID.allSatisfy { "0123456789abcdef".contains($0) })
            let spanID = try #require(json["spanId"] as? String)
            #expect(spanID.count == 16 && spanID.allSatisfy { "0123456789abcdef".contains($0) })
            #expect((json["parentSpanId"] as? String)?.count == (span.parentSpanID == nil ? nil : 16))
            #expect(json["startTimeUnixNano"] is String && json["endTimeUnixNano"] is String)
            #expect(json["kind"] as? Int == span.kind.rawValue)
            #expect((json["status"] == nil) == (span.status == .unset))
        }
        // Ill-formed UTF-8 from a client arrives replaced, and the body stays valid UTF-8.
        #expect(String(validating: body, as: UTF8.self) != nil)
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains("\"a\u{FFFD}b\u{FFFD}\""))
        #expect(
            text.contains("\\u0000") && text.contains("\\u0007") && text.contains("\\\"")
                && text.contains("\\\\"))
        #expect(
            text.contains("{\"key\":\"formgate.bytes_in\",\"value\":{\"intValue\":\"9223372036854775807\"}}"))
    }

    /// The oracle can fail: the receiver refuses what protobuf alone would read wrongly or not at all.
    @Test(arguments: [
        ("\"traceId\":\"0AF7651916CD43DD8448EB211C80319C\"", "lower-case hex"),
        ("\"traceId\":\"CvdlGRbNQ92ESOshHIAxnA==\"", "lower-case hex"),
        ("\"spanId\":\"b7ad6b716920333\"", "lower-case hex"),
        ("\"startTimeUnixNano\":5", "decimal string"),
        ("\"kind\":\"server\"", "json_format.Parse"),
        ("\"colour\":\"blue\"", "json_format.Parse"),
    ])
    func theOracleRefusesWhatOTLPDoesNotAllow(_ field: String, _ complaint: String) throws {
        let span = "{\(field),\"name\":\"s\"}"
        let body = "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[\(span)]}]}]}"
        let (errors, _) = try decodeWithOpenTelemetry(Array(body.utf8))
        #expect(errors.contains { $0.contains(complaint) }, "\(field): \(errors)")
    }

    @Test func anEmptyBatchIsAValidRequest() throws {
        let body = OTLPJSON.encode(spans: [Span](), serviceName: "formgate", version: "0.1.0")
        let (errors, decoded) = try decodeWithOpenTelemetry(body)
        #expect(errors.isEmpty, "\(errors)")
        #expect(decoded != nil)
    }

    /// `attributes` as the receiver wrote them: `[key, kind, value]`, values as strings.
    static func attributes(_ value: Any?) -> [[String]] {
        (value as? [[Any]] ?? []).map { entry in entry.map { "\($0)" } }
    }

    static func expectSame(_ got: Any?, _ attributes: [SpanAttribute], _ context: String) {
        let read = got as? [[Any]] ?? []
        #expect(read.count == attributes.count, "\(context)")
        for (attribute, entry) in zip(attributes, read) {
            guard entry.count == 3, let key = entry[0] as? String, let kind = entry[1] as? String else {
                Issue.record("\(context): \(entry)")
                continue
            }
            #expect(key == attribute.key)
            switch attribute.value {
            case .string(let text):
                #expect(kind == "string_value" && entry[2] as? String == text, "\(key)")
            case .int(let number):
                #expect(kind == "int_value" && entry[2] as? String == String(number), "\(key)")
            case .double(let number):
                let value = (entry[2] as? String).flatMap(Double.init)
                #expect(kind == "double_value", "\(key)")
                #expect(
                    value.map { $0 == number || ($0.isNaN && number.isNaN) } == true, "\(key): \(entry[2])")
            case .bool(let flag):
                #expect(kind == "bool_value" && (entry[2] as? NSNumber)?.boolValue == flag, "\(key)")
            }
        }
    }
}
