import HTTPCore
import TraceContext

/// Writes spans as an OTLP `ExportTraceServiceRequest` in the OTLP/HTTP JSON encoding (the
/// body of `POST /v1/traces` with `Content-Type: application/json`).
///
/// It follows the protobuf JSON mapping with OTLP's exceptions: `traceId`, `spanId` and
/// `parentSpanId` are lower-case hex (not base64); enums (`kind`, `status.code`) are
/// integers; 64-bit integers (`*TimeUnixNano`, `intValue`) are decimal strings. One resource
/// (`service.name`, `service.version`, `telemetry.sdk.*`) and one scope (`formgate`) hold
/// every span. Fields at their default (an unset status, a root's parent, empty lists) are
/// left out, as the mapping allows. Strings are escaped by `JSONLine`; they are Swift strings,
/// so always valid UTF-8 (`AttributeValue.string(utf8:)` repairs bytes from clients).
public enum OTLPJSON {
    /// The scope's name (`scopeSpans[].scope.name`) and `telemetry.sdk.name`.
    public static let scopeName = "formgate"

    /// The request body for `spans`; `serviceName` is `service.name` and `version` FormGate's
    /// version (`service.version`, `telemetry.sdk.version`, the scope's version).
    public static func encode(spans: some Collection<Span>, serviceName: String, version: String) -> [UInt8] {
        var json = JSONLine(capacity: 512 + spans.count * 640)
        json.key("resourceSpans")
        json.beginArray()
        json.beginObject()
        json.key("resource")
        json.beginObject()
        json.key("attributes")
        writeAttributes(
            [
                SpanAttribute("service.name", .string(serviceName)),
                SpanAttribute("service.version", .string(version)),
                SpanAttribute("telemetry.sdk.name", .string(scopeName)),
                SpanAttribute("telemetry.sdk.language", .string("swift")),
                SpanAttribute("telemetry.sdk.version", .string(version)),
            ], into: &json)
        json.endObject()
        json.key("scopeSpans")
        json.beginArray()
        json.beginObject()
        json.key("scope")
        json.beginObject()
        json.key("name")
        json.string(scopeName)
        json.key("version")
        json.string(version)
        json.endObject()
        json.key("spans")
        json.beginArray()
        for span in spans { writeSpan(span, into: &json) }
        json.endArray()
        json.endObject()
        json.endArray()
        json.endObject()
        json.endArray()
        return json.finish()
    }

    private static func writeSpan(_ span: Span, into json: inout JSONLine) {
        json.beginObject()
        json.key("traceId")
        json.string(span.traceID.description)
        json.key("spanId")
        json.string(span.spanID.description)
        if let parent = span.parentSpanID {
            json.key("parentSpanId")
            json.string(parent.description)
        }
        json.key("name")
        json.string(span.name)
        json.key("kind")
        json.integer(span.kind.rawValue)
        json.key("startTimeUnixNano")
        json.string(String(span.startTimeUnixNano))
        json.key("endTimeUnixNano")
        json.string(String(span.endTimeUnixNano))
        if !span.attributes.isEmpty {
            json.key("attributes")
            writeAttributes(span.attributes, into: &json)
        }
        if !span.events.isEmpty {
            json.key("events")
            json.beginArray()
            for event in span.events {
                json.beginObject()
                json.key("timeUnixNano")
                json.string(String(event.timeUnixNano))
                json.key("name")
                json.string(event.name)
                if !event.attributes.isEmpty {
                    json.key("attributes")
                    writeAttributes(event.attributes, into: &json)
                }
                json.endObject()
            }
            json.endArray()
        }
        switch span.status {
        case .unset:
            break
        case .ok:
            json.key("status")
            json.beginObject()
            json.key("code")
            json.integer(1)
            json.endObject()
        case .error(let message):
            json.key("status")
            json.beginObject()
            json.key("message")
            json.string(message)
            json.key("code")
            json.integer(2)
            json.endObject()
        }
        json.endObject()
    }

    private static func writeAttributes(_ attributes: [SpanAttribute], into json: inout JSONLine) {
        json.beginArray()
        for attribute in attributes {
            json.beginObject()
            json.key("key")
            json.string(attribute.key)
            json.key("value")
            json.beginObject()
            switch attribute.value {
            case .string(let text):
                json.key("stringValue")
                json.string(text)
            case .int(let number):
                json.key("intValue")
                json.string(String(number))
            case .double(let number):
                json.key("doubleValue")
                if number.isNaN {
                    json.string("NaN")
                } else if number.isInfinite {
                    json.string(number < 0 ? "-Infinity" : "Infinity")
                } else {
                    json.raw(number.description.utf8)
                }
            case .bool(let flag):
                json.key("boolValue")
                json.bool(flag)
            }
            json.endObject()
            json.endObject()
        }
        json.endArray()
    }
}
