import HTTPCore
import TraceContext

/// The W3C `traceparent` header value FormGate reads from every client request when tracing is
/// on, on arbitrary bytes (the whole input is the value). Properties: parsing never crashes; the
/// bytes and the same bytes as a String agree (validated when they are UTF-8, and decoded with
/// repair otherwise: only ASCII decides, so a U+FFFD changes nothing); a parsed value has
/// non-zero ids; formatting it (`description`, `appendHeaderValue`) gives 55 bytes of
/// `00-<32 lower hex>-<16 lower hex>-0<0|1>` that parse back to the same ids and sampled flag,
/// equal to the input (OWS trimmed) but for the version, which becomes `00`, and the flags,
/// which keep only `sampled` — so a version-00 input with flags 00 or 01 comes back exactly;
/// `init(headers:)` with the value as the only `traceparent` field agrees with parsing, and a
/// second `traceparent` field makes it nil.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTraceParent(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let parsed = bytes.withUnsafeBytes { TraceParent(parsing: $0) }
    if let text = String(validating: bytes, as: UTF8.self) {
        precondition(TraceParent(parsing: text) == parsed, "the String and the bytes parse differently")
    }
    precondition(
        TraceParent(parsing: String(decoding: bytes, as: UTF8.self)) == parsed,
        "the String with U+FFFD for invalid UTF-8 parses differently")
    checkHeaders(bytes, parsed: parsed)
    guard let parsed else { return 0 }
    precondition(parsed.traceID.isValid && parsed.parentID.isValid, "a parsed value with a zero id")
    let trimmed = trimmingOWS(bytes)
    precondition(trimmed.count >= 55, "a parsed value shorter than 55 bytes")
    var formatted: [UInt8] = [0x2A]
    parsed.appendHeaderValue(to: &formatted)
    precondition(formatted.first == 0x2A, "appendHeaderValue replaced what was there")
    formatted.removeFirst()
    precondition(Array(parsed.description.utf8) == formatted, "description differs from appendHeaderValue")
    precondition(isVersion00(formatted), "formatted as \(String(decoding: formatted, as: UTF8.self))")
    precondition(
        formatted[2..<53] == trimmed[2..<53] && formatted[54] == (parsed.sampled ? 0x31 : 0x30),
        "the formatted ids or flag differ from the input")
    if parsed.version == 0 && parsed.flags <= 1 {
        precondition(formatted == trimmed, "a version-00 value with flags 00 or 01 formatted differently")
    }
    let again = formatted.withUnsafeBytes { TraceParent(parsing: $0) }
    precondition(
        again == TraceParent(traceID: parsed.traceID, parentID: parsed.parentID, sampled: parsed.sampled),
        "the formatted value parses back to other ids or another sampled flag")
    return 0
}

/// `init(headers:)` with `value` as the only `traceparent` (among other fields, the name in
/// another case) is `parsed`; with a second `traceparent` field, valid or not, it is nil.
private func checkHeaders(_ value: [UInt8], parsed: TraceParent?) {
    var headers = HeaderFields()
    headers.append(name: "host", value: "upload.example")
    headers.append(name: Array("Traceparent".utf8), value: value)
    headers.append(name: "tracestate", value: "vendor=value")
    precondition(TraceParent(headers: headers) == parsed, "the only traceparent field parses differently")
    for second in [value, Array("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".utf8)] {
        var repeated = headers
        repeated.append(name: Array("TRACEPARENT".utf8), value: second)
        precondition(TraceParent(headers: repeated) == nil, "a repeated traceparent was read")
    }
}

/// `value` without the spaces and tabs around it (HTTP OWS), as the parser reads it.
private func trimmingOWS(_ value: [UInt8]) -> [UInt8] {
    let isOWS = { (byte: UInt8) in byte == 0x20 || byte == 0x09 }
    guard let first = value.firstIndex(where: { !isOWS($0) }),
        let last = value.lastIndex(where: { !isOWS($0) })
    else { return [] }
    return Array(value[first...last])
}

/// Whether `value` is `00-<32 lower hex>-<16 lower hex>-0<0|1>`, 55 bytes.
private func isVersion00(_ value: [UInt8]) -> Bool {
    let isLowerHex = { (byte: UInt8) in (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) }
    guard value.count == 55, value[0] == 0x30, value[1] == 0x30, value[53] == 0x30,
        value[54] == 0x30 || value[54] == 0x31
    else { return false }
    for index in 2..<53 {
        let dash = index == 2 || index == 35 || index == 52
        guard dash ? value[index] == 0x2D : isLowerHex(value[index]) else { return false }
    }
    return true
}
