internal import HTTPCore

/// Collects one request header block, field by field as HPACK decodes it, and checks it
/// against RFC 9113 §8.2 and §8.3.1: lowercase names, no connection-specific fields, `te`
/// only `trailers`, exactly one `:method`, `:scheme` and `:path` (`:authority` optional)
/// before every regular field, no other pseudo-header, no `host` that differs from
/// `:authority`, and no CONNECT.
///
/// libnghttp2 applies most of these rules itself before a field reaches the builder; the
/// builder is the second line and the one that refuses CONNECT. The header list size is
/// counted as §6.5.2 defines it (name + value + 32 per field); past `maxListSize` the
/// fields are only counted, neither checked nor kept (memory and work stay bounded), and
/// `finish()` says `.tooLarge`. Past twice `maxListSize` (`exceedsDecodingBound`) the block
/// is not worth decoding to its end: HPACK references to one table entry make a few bytes
/// on the wire decode to kilobytes, so the caller stops taking fields.
struct HTTP2RequestHeadBuilder {
    /// How a header block ended.
    enum Outcome: Equatable {
        /// A valid request.
        case head(HTTP2RequestHead)
        /// A malformed request (answer RST_STREAM PROTOCOL_ERROR).
        case malformed(HTTP2MalformedReason)
        /// Over the size limit (answer 431).
        case tooLarge
    }

    private let maxListSize: Int
    private var listSize = 0
    private var method: String?
    private var scheme: String?
    private var authority: String?
    private var path: String?
    private var fields = HeaderFields()
    private var sawRegularField = false
    /// The first rule broken; later fields are ignored.
    private(set) var failure: HTTP2MalformedReason?

    /// Creates a builder for a list of at most `maxListSize` bytes (§6.5.2 measure).
    init(maxListSize: Int) {
        self.maxListSize = maxListSize
        // Room for a usual request's fields at once, not grown field by field.
        fields.reserveCapacity(16)
        fields.reserveByteCapacity(512)
    }

    /// Whether the list went past the size limit.
    var isTooLarge: Bool { listSize > maxListSize }

    /// Whether the list went past twice the size limit: an honest oversized request (a big
    /// cookie) decodes to about what it sent, a list that far past the advertised
    /// SETTINGS_MAX_HEADER_LIST_SIZE is not answered 431 but reset before it is decoded on.
    var exceedsDecodingBound: Bool { listSize - maxListSize > maxListSize }

    /// Takes the next field; returns the rule it breaks, if any (the builder then ignores
    /// the rest of the block). Past `maxListSize` a field only counts: the verdict is
    /// `.tooLarge` whatever it holds.
    @discardableResult
    mutating func append(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) -> HTTP2MalformedReason?
    {
        guard failure == nil else { return failure }
        listSize += name.count + value.count + 32
        guard !isTooLarge else { return nil }
        if let reason = Self.check(name: name, value: value) ?? classify(name: name, value: value) {
            failure = reason
            return reason
        }
        return nil
    }

    /// The verdict once END_HEADERS was received.
    func finish() -> Outcome {
        if let failure { return .malformed(failure) }
        if isTooLarge { return .tooLarge }
        guard let method, let scheme, let path, !method.isEmpty, !scheme.isEmpty, !path.isEmpty else {
            return .malformed(method == "CONNECT" ? .connectMethod : .missingPseudoHeader)
        }
        if method == "CONNECT" { return .malformed(.connectMethod) }
        guard path.utf8.first == UInt8(ascii: "/") || (path == "*" && method == "OPTIONS") else {
            return .malformed(.invalidPath)
        }
        if fields.count(of: "host") > 1 { return .malformed(.hostDiffersFromAuthority) }
        if let authority, let host = fields.first("host"),
            !host.elementsEqual(authority.utf8, by: { Self.lowercased($0) == Self.lowercased($1) })
        {
            return .malformed(.hostDiffersFromAuthority)
        }
        return .head(
            HTTP2RequestHead(method: method, scheme: scheme, authority: authority, path: path, fields: fields)
        )
    }

    /// The byte-level rules: a token name without uppercase, a value without NUL, CR, LF
    /// or surrounding whitespace.
    private static func check(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
        -> HTTP2MalformedReason?
    {
        let body = name.first == UInt8(ascii: ":") ? UnsafeRawBufferPointer(rebasing: name.dropFirst()) : name
        guard !body.isEmpty else { return .invalidName }
        for byte in body {
            if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { return .uppercaseName }
            if !ByteClass.isTokenChar(byte) { return .invalidName }
        }
        if let first = value.first, let last = value.last {
            if first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09 { return .invalidValue }
        }
        if value.contains(where: { $0 == 0 || $0 == 0x0a || $0 == 0x0d }) { return .invalidValue }
        return nil
    }

    /// The field's place in the block: a pseudo-header or a regular field. Names are compared
    /// as bytes (`check` has refused uppercase): a `String` per field name cost 2 % of the
    /// proxy's instructions per h2 request.
    private mutating func classify(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer)
        -> HTTP2MalformedReason?
    {
        if name.first == UInt8(ascii: ":") {
            if sawRegularField { return .pseudoHeaderAfterField }
            if Self.equals(name, ":method") { return Self.set(&method, value) }
            if Self.equals(name, ":scheme") { return Self.set(&scheme, value) }
            if Self.equals(name, ":path") { return Self.set(&path, value) }
            if Self.equals(name, ":authority") { return Self.set(&authority, value) }
            if Self.equals(name, ":status") { return .responsePseudoHeader }
            return .unknownPseudoHeader
        }
        sawRegularField = true
        if Self.equals(name, "connection") || Self.equals(name, "keep-alive")
            || Self.equals(name, "proxy-connection") || Self.equals(name, "transfer-encoding")
            || Self.equals(name, "upgrade")
        {
            return .connectionSpecificField
        }
        if Self.equals(name, "te"), !Self.equals(value, "trailers") { return .teNotTrailers }
        fields.append(name: name, value: value)
        return nil
    }

    /// Whether `bytes` are exactly `literal`'s.
    private static func equals(_ bytes: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        let expected = literal.utf8Start
        for index in 0..<bytes.count where bytes[index] != expected[index] { return false }
        return true
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    private static func set(_ slot: inout String?, _ value: UnsafeRawBufferPointer) -> HTTP2MalformedReason? {
        guard slot == nil else { return .duplicatePseudoHeader }
        slot = String(decoding: value, as: UTF8.self)
        return nil
    }
}
