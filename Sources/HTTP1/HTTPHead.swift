public import HTTPCore

/// An HTTP version: `HTTP/1.0` or `HTTP/1.1` on the wire, or `HTTP/2` for a request an HTTP/2
/// stream carried (its head built from HEADERS, never parsed from text).
public struct HTTPVersion: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var major: Int
    public var minor: Int

    public init(major: Int, minor: Int) {
        self.major = major
        self.minor = minor
    }

    public static let http10 = HTTPVersion(major: 1, minor: 0)
    public static let http11 = HTTPVersion(major: 1, minor: 1)
    /// HTTP/2 (RFC 9113): connection management is the transport's, not the head's.
    public static let http2 = HTTPVersion(major: 2, minor: 0)

    public var description: String { "HTTP/\(major).\(minor)" }
}

/// A parsed request head: request line and header fields.
public struct RequestHead: Equatable, Sendable {
    /// The method token, as sent (methods are case-sensitive).
    public var method: String
    /// The request target in origin form (`/path?query`), or `*`; normalised by the parser
    /// (`RequestTarget`), and sent upstream as it is.
    public var target: String
    /// The protocol version.
    public var version: HTTPVersion
    /// The header fields in order.
    public var headers: HeaderFields

    public init(
        method: String, target: String, version: HTTPVersion = .http11,
        headers: HeaderFields = HeaderFields()
    ) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }

    /// The path part of the target (before `?`).
    public var path: Substring {
        guard let question = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return target[...] }
        return target[..<question]
    }

    /// Whether the client asked to keep the connection open after this exchange.
    public var keepAlive: Bool {
        let tokens = ConnectionTokens(headers)
        return version == .http11 ? !tokens.contains("close") : tokens.contains("keep-alive")
    }

    /// Whether the client sent `Expect: 100-continue`.
    public var expectsContinue: Bool {
        headers["Expect"].map { $0.lowercased() == "100-continue" } ?? false
    }

    /// The request head as sent upstream: `METHOD target HTTP/1.1`, fields, blank line.
    public func serialized() -> [UInt8] {
        var sink = ByteArraySink(capacity: 256 + headers.count * 32)
        serialize(into: &sink)
        return sink.bytes
    }
}

/// A parsed response head: status line and header fields.
public struct ResponseHead: Equatable, Sendable {
    /// The protocol version.
    public var version: HTTPVersion
    /// The status code.
    public var status: Int
    /// The reason phrase bytes.
    public var reason: [UInt8]
    /// The header fields in order.
    public var headers: HeaderFields

    public init(
        version: HTTPVersion = .http11, status: Int, reason: String, headers: HeaderFields = HeaderFields()
    ) {
        self.version = version
        self.status = status
        self.reason = Array(reason.utf8)
        self.headers = headers
    }

    /// Whether the server will keep the connection open after this response.
    public var keepAlive: Bool {
        let tokens = ConnectionTokens(headers)
        return version == .http11 ? !tokens.contains("close") : tokens.contains("keep-alive")
    }

    /// The response head as sent to the client: `HTTP/1.1 status reason`, fields, blank line.
    public func serialized() -> [UInt8] {
        var sink = ByteArraySink(capacity: 128 + headers.count * 32)
        serialize(into: &sink)
        return sink.bytes
    }
}

extension HeaderFields {
    /// Appends `Name: value\r\n` for each field, then the blank line.
    public func appendSerialized(to out: inout [UInt8]) {
        var sink = ByteArraySink()
        swap(&sink.bytes, &out)
        serialize(into: &sink)
        swap(&sink.bytes, &out)
    }
}

/// The tokens of every `Connection` header, read in place: comma-separated, whitespace
/// trimmed, compared without regard to ASCII case.
struct ConnectionTokens {
    let headers: HeaderFields

    init(_ headers: HeaderFields) {
        self.headers = headers
    }

    /// Whether some `Connection` field lists `token` (ASCII, any case).
    func contains(_ token: String) -> Bool {
        var found = false
        forEachToken { candidate in
            if asciiCaseInsensitiveEquals(candidate, token.utf8) { found = true }
        }
        return found
    }

    /// Calls `body` with each non-empty token (borrowed bytes), in order.
    func forEachToken(_ body: (UnsafeBufferPointer<UInt8>) -> Void) {
        headers.forEachField { name, value in
            guard asciiCaseInsensitiveEquals(name, "connection".utf8) else { return }
            var start = 0
            while start <= value.count {
                let end = value[start...].firstIndex(of: UInt8(ascii: ",")) ?? value.count
                var first = start
                var last = end
                while first < last, value[first] == 0x20 || value[first] == 0x09 { first += 1 }
                while last > first, value[last - 1] == 0x20 || value[last - 1] == 0x09 { last -= 1 }
                if last > first { body(UnsafeBufferPointer(rebasing: value[first..<last])) }
                start = end + 1
            }
        }
    }
}

extension Substring {
    func trimmingWhitespace() -> Substring {
        var slice = self
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return slice
    }
}
