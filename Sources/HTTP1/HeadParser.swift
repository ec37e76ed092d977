public import HTTPCore

/// Parses complete HTTP/1.x heads strictly (RFC 9112): one space between start-line
/// elements, token names with the colon right after them, no obs-fold, no bare CR, NUL or
/// other controls. Request lines end in CRLF (a bare LF is refused: a server behind the proxy
/// may not read it as a line end); response lines may also end in a bare LF (RFC 9112 §2.2).
/// The proxy re-serializes every head, so what it forwards always uses CRLF.
public enum HeadParser {
    /// Limits on a head's fields.
    public struct Limits: Sendable {
        /// The most header lines.
        public var fields: Int
        public init(fields: Int = 100) { self.fields = fields }
    }

    /// Parses a request head (the bytes up to and including its empty line). The target comes
    /// back normalised (`RequestTarget`); a second Content-Type is refused like a second Host.
    public static func parseRequest(
        _ head: [UInt8], limits: Limits = Limits(), reusing spare: consuming HeaderFields = HeaderFields()
    ) throws(HTTP1Error) -> RequestHead {
        var lines = try Lines(head, requireCRLF: true)
        guard let (start, startOffset) = try lines.next() else { throw HTTP1Error(.invalidStartLine) }
        guard let parts = startLineParts(start), let third = parts.2 else {
            throw HTTP1Error(.invalidStartLine, at: startOffset)
        }
        let method = parts.0
        guard !method.isEmpty, method.allSatisfy(ByteClass.isTokenChar) else {
            throw HTTP1Error(.invalidMethod, at: startOffset)
        }
        let target = parts.1
        guard !target.isEmpty, target.allSatisfy(RequestTarget.isTargetByte) else {
            throw HTTP1Error(.invalidTarget, at: startOffset + method.count + 1)
        }
        let version = try parseVersion(third, at: startOffset)
        var headers = try parseFields(&lines, limits: limits, reusing: consume spare)
        let methodString = String(decoding: method, as: UTF8.self)
        let originTarget = try normalizeTarget(
            target, method: methodString, headers: &headers, at: startOffset + method.count + 1)
        try validateHost(headers, version: version)
        guard headers.count(of: "Content-Type") <= 1 else { throw HTTP1Error(.duplicateContentType) }
        return RequestHead(method: methodString, target: originTarget, version: version, headers: headers)
    }

    /// Parses a response head (the bytes up to and including its empty line).
    public static func parseResponse(
        _ head: [UInt8], limits: Limits = Limits(), reusing spare: consuming HeaderFields = HeaderFields()
    ) throws(HTTP1Error) -> ResponseHead {
        var lines = try Lines(head)
        guard let (start, startOffset) = try lines.next() else { throw HTTP1Error(.invalidStartLine) }
        guard let parts = startLineParts(start) else { throw HTTP1Error(.invalidStartLine, at: startOffset) }
        let version = try parseVersion(parts.0, at: startOffset)
        let code = parts.1
        guard code.count == 3, code.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), code.first != 0x30 else {
            throw HTTP1Error(.invalidStatus, at: startOffset + parts.0.count + 1)
        }
        let status = code.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        let reason = parts.2.map { ReasonPhrases.shared($0) ?? Array($0) } ?? []
        let headers = try parseFields(&lines, limits: limits, reusing: consume spare)
        var response = ResponseHead(version: version, status: status, reason: "", headers: headers)
        response.reason = reason
        return response
    }

    /// A start line split at its first two spaces, as `split(separator: " ", maxSplits: 2)`
    /// keeping empty elements would (the third, if any, keeps later spaces), without an array;
    /// `nil` without a space.
    static func startLineParts(_ line: ArraySlice<UInt8>)
        -> (ArraySlice<UInt8>, ArraySlice<UInt8>, ArraySlice<UInt8>?)?
    {
        guard let first = line.firstIndex(of: 0x20) else { return nil }
        let rest = line[(first + 1)...]
        guard let second = rest.firstIndex(of: 0x20) else { return (line[..<first], rest, nil) }
        return (line[..<first], line[(first + 1)..<second], line[(second + 1)...])
    }

    static func parseVersion(_ bytes: ArraySlice<UInt8>, at offset: Int) throws(HTTP1Error) -> HTTPVersion {
        let start = bytes.startIndex
        guard bytes.count == 8, bytes.starts(with: "HTTP/".utf8), bytes[start + 6] == UInt8(ascii: "."),
            (0x30...0x39).contains(bytes[start + 5]), (0x30...0x39).contains(bytes[start + 7])
        else { throw HTTP1Error(.invalidVersion, at: offset) }
        let version = HTTPVersion(major: Int(bytes[start + 5] - 0x30), minor: Int(bytes[start + 7] - 0x30))
        guard version == .http11 || version == .http10 else {
            throw HTTP1Error(.unsupportedVersion, at: offset)
        }
        return version
    }

    /// The header fields, as spans of the head's own bytes (no copy per field).
    /// `spare`'s fields array (a kept list's) is reused.
    static func parseFields(
        _ lines: inout Lines, limits: Limits, reusing spare: consuming HeaderFields = HeaderFields()
    ) throws(HTTP1Error) -> HeaderFields {
        var headers = HeaderFields(buffer: lines.bytes, reusing: consume spare)
        headers.reserveCapacity(16)
        while let (line, offset) = try lines.next() {
            if line.isEmpty { return headers }
            guard line.first != 0x20, line.first != 0x09 else {
                throw HTTP1Error(.obsoleteLineFolding, at: offset)
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw HTTP1Error(.invalidHeaderName, at: offset)
            }
            let name = line[line.startIndex..<colon]
            guard !name.isEmpty else { throw HTTP1Error(.invalidHeaderName, at: offset) }
            if let bad = name.firstIndex(where: { !ByteClass.isTokenChar($0) }) {
                let isSpace = name[bad...].allSatisfy { $0 == 0x20 || $0 == 0x09 }
                throw HTTP1Error(isSpace ? .whitespaceBeforeColon : .invalidHeaderName, at: offset)
            }
            var value = line[(colon + 1)...]
            while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
            while let last = value.last, last == 0x20 || last == 0x09 { value = value.dropLast() }
            guard headers.count < limits.fields else { throw HTTP1Error(.tooManyHeaders, at: offset) }
            headers.appendField(name: name.indices, value: value.indices)
        }
        throw HTTP1Error(.invalidStartLine)
    }

    /// Origin form and `*` as `RequestTarget.forwarded` gives them (the one normalisation both
    /// transports use; the bytes were checked with the start line); absolute form
    /// (`http://host/path`) becomes normalised origin form and its authority replaces Host
    /// (RFC 9112 §3.2.2).
    static func normalizeTarget(
        _ target: ArraySlice<UInt8>, method: String, headers: inout HeaderFields, at offset: Int
    ) throws(HTTP1Error) -> String {
        if target.first == UInt8(ascii: "/") || target.first == UInt8(ascii: "*") {
            return try RequestTarget.normalized(target, method: method, at: offset)
        }
        for scheme in ["http://", "https://"]
        where asciiCaseInsensitiveEquals(target.prefix(scheme.utf8.count), scheme.utf8) {
            let rest = target.dropFirst(scheme.utf8.count)
            let authority = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") }
            guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")) else {
                throw HTTP1Error(.invalidTarget, at: offset)
            }
            let path = rest.dropFirst(authority.count)
            headers.set(name: "Host".utf8, value: authority)
            let pathOffset = offset + scheme.utf8.count + authority.count
            if path.first == UInt8(ascii: "/") {
                return try RequestTarget(normalizing: path, at: pathOffset).originForm
            }
            return try RequestTarget(normalizing: [UInt8(ascii: "/")] + path, at: pathOffset - 1).originForm
        }
        throw HTTP1Error(.invalidTarget, at: offset)
    }

    /// One Host in HTTP/1.1 (at most one in 1.0), a `host[:port]` with no userinfo or path.
    static func validateHost(_ headers: HeaderFields, version: HTTPVersion) throws(HTTP1Error) {
        let count = headers.count(of: "Host")
        guard count <= 1, count == 1 || version == .http10 else { throw HTTP1Error(.invalidHost) }
        guard let host = headers.firstValue("Host") else { return }
        guard !host.isEmpty, host.allSatisfy(isHostChar) else { throw HTTP1Error(.invalidHost) }
    }

    static func isHostChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-._~!$&'()*+,;=%:[]".utf8.contains(byte)
        }
    }
}

/// The lines of a head: split at LF with one CR before it removed; any other CR, a NUL or
/// another control (except tab) is refused, and with `requireCRLF` a LF without its CR.
struct Lines {
    /// The whole head (the lines are slices of it).
    let bytes: [UInt8]
    private let requireCRLF: Bool
    private var position = 0

    init(_ bytes: [UInt8], requireCRLF: Bool = false) throws(HTTP1Error) {
        self.bytes = bytes
        self.requireCRLF = requireCRLF
        // Skip empty lines before the start line (RFC 9112 §2.2).
        while position < bytes.count {
            if bytes[position] == 0x0A {
                guard !requireCRLF else { throw HTTP1Error(.bareLineFeed, at: position) }
                position += 1
            } else if bytes[position] == 0x0D, position + 1 < bytes.count, bytes[position + 1] == 0x0A {
                position += 2
            } else {
                break
            }
        }
    }

    /// The next line without its line break, and its offset; `nil` at the end of the head.
    ///
    /// One pass finds the line feed and the first control character (any byte under 0x20 but
    /// tab, or DEL), eight bytes at a time: a word without such a byte is skipped whole. The
    /// errors are those of checking in turn: no line feed, a bare one (`requireCRLF`), then a
    /// control character in the line.
    mutating func next() throws(HTTP1Error) -> (ArraySlice<UInt8>, Int)? {
        guard position < bytes.count else { return nil }
        let start = position
        let (newline, firstControl) = bytes.withUnsafeBytes { Self.scan($0, from: start) }
        guard let newline else { throw HTTP1Error(.invalidStartLine, at: start) }
        position = newline + 1
        var end = newline
        if end > start, bytes[end - 1] == 0x0D {
            end -= 1
        } else if requireCRLF {
            throw HTTP1Error(.bareLineFeed, at: newline)
        }
        // The CR before the line feed is the line break's, not the line's.
        if let firstControl, firstControl < end {
            throw HTTP1Error(.controlCharacter, at: firstControl)
        }
        return (bytes[start..<end], start)
    }

    /// The first line feed at or after `start`, and the first control character other than
    /// tab before it.
    static func scan(_ bytes: UnsafeRawBufferPointer, from start: Int) -> (newline: Int?, control: Int?) {
        var index = start
        var control: Int?
        while index < bytes.count {
            if index + 8 <= bytes.count {
                let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                // High bit of each byte under 0x20 (those of 0x80 and over are cleared), or
                // equal to 0x7F.
                let low: UInt64 = 0x0101_0101_0101_0101
                let high: UInt64 = 0x8080_8080_8080_8080
                let under = (word &- low &* 0x20) & ~word & high
                let delete = ((word ^ (low &* 0x7F)) &- low) & ~(word ^ (low &* 0x7F)) & high
                if under | delete == 0 {
                    index += 8
                    continue
                }
            }
            let byte = bytes[index]
            if byte == 0x0A { return (index, control) }
            if control == nil, (byte < 0x20 && byte != 0x09) || byte == 0x7F { control = index }
            index += 1
        }
        return (nil, control)
    }
}
