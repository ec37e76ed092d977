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
    /// The normalised, re-encoded path (starts with `/`).
    public let path: String
    /// The query without its `?`, exactly as sent; `nil` without a `?`.
    public let query: String?

    /// Normalises `target`, which must start with `/`; `offset` is its position in the head
    /// (for errors).
    ///
    /// - Throws: `.invalidTarget`, `.invalidPercentEncoding`, `.encodedSeparator` or
    ///   `.targetAboveRoot`.
    public init(normalizing target: some Collection<UInt8>, at offset: Int = 0) throws(HTTP1Error) {
        let bytes = Array(target)
        guard bytes.first == UInt8(ascii: "/") else { throw HTTP1Error(.invalidTarget, at: offset) }
        let pathEnd = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
        if pathEnd < bytes.count {
            let query = bytes[(pathEnd + 1)...]
            if let bad = query.firstIndex(where: { !ByteClass.isQueryChar($0) }) {
                throw HTTP1Error(.invalidTarget, at: offset + bad)
            }
            self.query = String(decoding: query, as: UTF8.self)
        } else {
            self.query = nil
        }
        var segments: [[UInt8]] = []
        var trailingSlash = false
        var start = 1
        while start <= pathEnd {
            let end = bytes[start..<pathEnd].firstIndex(of: UInt8(ascii: "/")) ?? pathEnd
            let segment = try Self.segment(bytes[start..<end], at: offset + start)
            let isLast = end == pathEnd
            switch segment.decoded {
            case [], [UInt8(ascii: ".")]:
                trailingSlash = isLast
            case [UInt8(ascii: "."), UInt8(ascii: ".")]:
                guard segments.popLast() != nil else {
                    throw HTTP1Error(.targetAboveRoot, at: offset + start)
                }
                trailingSlash = isLast
            default:
                let beforeParameters = segment.decoded.prefix { $0 != UInt8(ascii: ";") }
                if beforeParameters.count < segment.decoded.count,
                    beforeParameters.allSatisfy({ $0 == 0x2E }),
                    beforeParameters.count <= 2
                {
                    throw HTTP1Error(.invalidTarget, at: offset + start)
                }
                segments.append(segment.encoded)
                trailingSlash = false
            }
            start = end + 1
        }
        var path: [UInt8] = []
        path.reserveCapacity(pathEnd + 1)
        for segment in segments {
            path.append(UInt8(ascii: "/"))
            path.append(contentsOf: segment)
        }
        if path.isEmpty || trailingSlash { path.append(UInt8(ascii: "/")) }
        self.path = String(decoding: path, as: UTF8.self)
    }

    /// The target as forwarded: the path, then `?` and the query when there was one.
    public var originForm: String {
        query.map { path + "?" + $0 } ?? path
    }

    /// What routes compare their prefixes with: `path` percent-decoded, each segment without
    /// its `;` parameters (Tomcat and other servlet containers route `/upload;x` to `/upload`;
    /// for the others the match is only wider). Only valid for a path this type produced: its
    /// escapes are well-formed and never encode `/`.
    public static func routingPath(_ path: some StringProtocol) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(path.utf8.count)
        var inParameters = false
        var iterator = path.utf8.makeIterator()
        while var byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next() {
                byte = hexValue(high, low) ?? 0
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
                guard index + 2 < raw.endIndex, let value = hexValue(raw[index + 1], raw[index + 2])
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
                    appendEscaped(value, to: &encoded)
                }
                index += 3
            case UInt8(ascii: "\\"), UInt8(ascii: "#"):
                throw HTTP1Error(.invalidTarget, at: position)
            default:
                decoded.append(byte)
                if ByteClass.isPathChar(byte) {
                    encoded.append(byte)
                } else {
                    appendEscaped(byte, to: &encoded)
                }
                index += 1
            }
        }
        return (decoded, encoded)
    }

    static let upperHex = Array("0123456789ABCDEF".utf8)

    static func appendEscaped(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "%"))
        out.append(upperHex[Int(byte >> 4)])
        out.append(upperHex[Int(byte & 15)])
    }

    static func hexValue(_ high: UInt8, _ low: UInt8) -> UInt8? {
        guard let high = ChunkedDecoder.hexValue(high), let low = ChunkedDecoder.hexValue(low) else {
            return nil
        }
        return high << 4 | low
    }
}
