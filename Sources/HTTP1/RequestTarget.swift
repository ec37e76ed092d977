import HTTPCore

/// An origin-form request target (`/path?query`) in the one spelling FormGate routes on and
/// forwards, so that no spelling an upstream resolves to a route's path can miss the route.
///
/// The path is percent-decoded, its dot segments removed (RFC 3986 §5.2.4) and its empty
/// segments merged, as nginx, Apache and PHP resolve it before they pick a handler; it is then
/// re-encoded: unreserved bytes raw, reserved ones (sub-delims, `:`, `@`) as the client sent
/// them, every other byte as `%XX`. Refused, because upstreams read them differently: a
/// malformed escape or one that decodes to a control, `%2F` and `%5C` (nginx decodes `%2F`,
/// Apache refuses it, object stores keep it as data; IIS reads a backslash as `/`), a raw
/// backslash or `#`, a `..` above the root, and `.;` / `..;` segments (Tomcat strips path
/// parameters before resolving dots). Letter case is kept: paths are case-sensitive, as in
/// nginx and Apache on Linux. The query is forwarded as sent once its bytes are checked.
public struct RequestTarget: Equatable, Sendable {
    /// The target as forwarded: the normalised path, then `?` and the query as sent.
    public let originForm: String
    /// UTF-8 length of the path in `originForm`.
    private let pathLength: Int

    /// The normalised, re-encoded path (starts with `/`).
    public var path: Substring { Substring(originForm.utf8.prefix(pathLength)) }
    /// The query without its `?`, exactly as sent; `nil` without a `?`.
    public var query: Substring? {
        pathLength < originForm.utf8.count ? Substring(originForm.utf8.dropFirst(pathLength + 1)) : nil
    }

    /// Normalises `target`, which must start with `/`; `offset` is its position in the head
    /// (for errors).
    ///
    /// - Throws: `.invalidTarget`, `.invalidPercentEncoding`, `.encodedSeparator` or
    ///   `.targetAboveRoot`.
    public init(normalizing target: some Collection<UInt8>, at offset: Int = 0) throws(HTTP1Error) {
        // The common case reads the caller's bytes in place; only a path to rewrite is copied.
        let normal = target.withContiguousStorageIfAvailable { bytes in
            Self.normalForm(bytes).map {
                RequestTarget(originForm: String(decoding: bytes, as: UTF8.self), pathLength: $0)
            }
        }
        if let normal = normal ?? nil {
            self = normal
            return
        }
        let bytes = Array(target)
        guard bytes.first == UInt8(ascii: "/") else { throw HTTP1Error(.invalidTarget, at: offset) }
        let pathEnd = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
        if let bad = bytes[pathEnd...].dropFirst().firstIndex(where: { !ByteClass.isQueryChar($0) }) {
            throw HTTP1Error(.invalidTarget, at: offset + bad)
        }
        if Self.isNormal(bytes[..<pathEnd]) {
            // The common case: nothing to decode, merge or remove.
            originForm = String(decoding: bytes, as: UTF8.self)
            pathLength = pathEnd
            return
        }
        var path = try Self.normalizedPath(bytes[..<pathEnd], at: offset)
        pathLength = path.count
        path.append(contentsOf: bytes[pathEnd...])
        originForm = String(decoding: path, as: UTF8.self)
    }

    /// The request target FormGate routes on and forwards, for either transport: an origin-form
    /// target (an HTTP/1.1 request line's, or an HTTP/2 `:path`) normalised, or `*` for OPTIONS.
    /// Every byte must be visible ASCII (no space, control or byte above 0x7E, as RFC 9112's
    /// request line allows); `offset` is the target's position in the head, for errors.
    ///
    /// - Throws: `.invalidTarget` (a byte not allowed, `*` with another method, not origin
    ///   form), and what `init(normalizing:at:)` throws.
    public static func forwarded(_ target: some Collection<UInt8>, method: String, at offset: Int = 0)
        throws(HTTP1Error) -> String
    {
        var position = offset
        for byte in target {
            guard isTargetByte(byte) else { throw HTTP1Error(.invalidTarget, at: position) }
            position += 1
        }
        return try normalized(target, method: method, at: offset)
    }

    /// `forwarded` for a target whose bytes were checked (`isTargetByte`).
    static func normalized(_ target: some Collection<UInt8>, method: String, at offset: Int)
        throws(HTTP1Error) -> String
    {
        if target.elementsEqual("*".utf8) {
            guard method == "OPTIONS" else { throw HTTP1Error(.invalidTarget, at: offset) }
            return "*"
        }
        return try RequestTarget(normalizing: target, at: offset).originForm
    }

    /// Whether `byte` may stand in a request target: visible ASCII.
    static func isTargetByte(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }

    private init(originForm: String, pathLength: Int) {
        self.originForm = originForm
        self.pathLength = pathLength
    }

    /// The path length of a target that is valid and already in normal form, else `nil` (the
    /// caller then takes the general path, which also finds the error).
    private static func normalForm(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes.first == UInt8(ascii: "/") else { return nil }
        let pathEnd = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
        guard bytes[pathEnd...].dropFirst().allSatisfy(ByteClass.isQueryChar), isNormal(bytes[..<pathEnd])
        else {
            return nil
        }
        return pathEnd
    }

    /// Whether `path` is already in normal form: only bytes a segment carries raw, and no
    /// empty segment or segment starting with `.` or `;` (cheap to check, and what nearly
    /// every client sends).
    private static func isNormal(_ path: some Collection<UInt8>) -> Bool {
        var previous = UInt8(ascii: "/")
        for byte in path.dropFirst() {
            if previous == UInt8(ascii: "/") {
                guard byte != UInt8(ascii: "/"), byte != UInt8(ascii: "."), byte != UInt8(ascii: ";") else {
                    return false
                }
            }
            guard byte == UInt8(ascii: "/") || ByteClass.isPathChar(byte) else { return false }
            previous = byte
        }
        return true
    }

    /// The path decoded, its dot segments removed, its empty segments merged, re-encoded.
    private static func normalizedPath(_ bytes: ArraySlice<UInt8>, at offset: Int) throws(HTTP1Error)
        -> [UInt8]
    {
        var segments: [[UInt8]] = []
        var trailingSlash = false
        var start = bytes.startIndex + 1
        while start <= bytes.endIndex {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
            let segment = try Self.segment(bytes[start..<end], at: offset + start)
            let isLast = end == bytes.endIndex
            switch segment.decoded {
            case [], [UInt8(ascii: ".")]:
                trailingSlash = isLast
            case [UInt8(ascii: "."), UInt8(ascii: ".")]:
                guard segments.popLast() != nil else {
                    throw HTTP1Error(.targetAboveRoot, at: offset + start)
                }
                trailingSlash = isLast
            default:
                guard !isDotSegmentWithParameters(segment.decoded) else {
                    throw HTTP1Error(.invalidTarget, at: offset + start)
                }
                segments.append(segment.encoded)
                trailingSlash = false
            }
            start = end + 1
        }
        var path: [UInt8] = []
        path.reserveCapacity(bytes.count + 1)
        for segment in segments {
            path.append(UInt8(ascii: "/"))
            path.append(contentsOf: segment)
        }
        if path.isEmpty || trailingSlash { path.append(UInt8(ascii: "/")) }
        return path
    }

    /// Whether `routingPath(_:)` differs from `path`'s own bytes (it holds a `%` or a `;`):
    /// when not, routes match against `path.utf8` and no array is made.
    public static func needsRoutingDecode(_ path: some StringProtocol) -> Bool {
        path.utf8.contains { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: ";") }
    }

    /// `.;x`, `..;x` or `;x`: a servlet container drops the `;` parameters and then resolves
    /// what is left as a dot or empty segment, which this type cannot mirror safely.
    private static func isDotSegmentWithParameters(_ segment: [UInt8]) -> Bool {
        guard let semicolon = segment.firstIndex(of: UInt8(ascii: ";")) else { return false }
        return semicolon <= 2 && segment[..<semicolon].allSatisfy { $0 == UInt8(ascii: ".") }
    }

    /// What routes compare their prefixes with: `path` percent-decoded, each segment without
    /// its `;` parameters (Tomcat and other servlet containers route `/upload;x` to `/upload`;
    /// for the others the match is only wider). Meant for a path this type produced (its
    /// escapes are well-formed and never encode `/`); a malformed escape is kept as it is.
    public static func routingPath(_ path: some StringProtocol) -> [UInt8] {
        guard needsRoutingDecode(path) else { return Array(path.utf8) }
        let bytes = Array(path.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var inParameters = false
        var index = 0
        while index < bytes.count {
            var byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "%"), index + 1 < bytes.count,
                let value = Hex.value(high: bytes[index], low: bytes[index + 1])
            {
                byte = value
                index += 2
            }
            if byte == UInt8(ascii: "/") {
                inParameters = false
            } else if byte == UInt8(ascii: ";") {
                inParameters = true
            }
            if !inParameters { out.append(byte) }
        }
        return out
    }

    /// One segment decoded (for dot-segment checks) and re-encoded (for forwarding).
    private static func segment(_ raw: ArraySlice<UInt8>, at offset: Int) throws(HTTP1Error)
        -> (decoded: [UInt8], encoded: [UInt8])
    {
        var decoded: [UInt8] = []
        var encoded: [UInt8] = []
        decoded.reserveCapacity(raw.count)
        encoded.reserveCapacity(raw.count)
        var index = raw.startIndex
        while index < raw.endIndex {
            let byte = raw[index]
            let position = offset + index - raw.startIndex
            switch byte {
            case UInt8(ascii: "%"):
                guard index + 2 < raw.endIndex,
                    let value = Hex.value(high: raw[index + 1], low: raw[index + 2])
                else { throw HTTP1Error(.invalidPercentEncoding, at: position) }
                guard !ByteClass.isForbiddenInFieldValue(value), value != 0x09 else {
                    throw HTTP1Error(.invalidPercentEncoding, at: position)
                }
                guard value != UInt8(ascii: "/"), value != UInt8(ascii: "\\") else {
                    throw HTTP1Error(.encodedSeparator, at: position)
                }
                decoded.append(value)
                if ByteClass.isUnreserved(value) {
                    encoded.append(value)
                } else {
                    Hex.appendPercentEscaped(value, to: &encoded)
                }
                index += 3
            case UInt8(ascii: "\\"), UInt8(ascii: "#"):
                throw HTTP1Error(.invalidTarget, at: position)
            default:
                decoded.append(byte)
                if ByteClass.isPathChar(byte) {
                    encoded.append(byte)
                } else {
                    Hex.appendPercentEscaped(byte, to: &encoded)
                }
                index += 1
            }
        }
        return (decoded, encoded)
    }
}
