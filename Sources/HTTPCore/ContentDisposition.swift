#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `Content-Disposition` value of a multipart part (RFC 7578 §4.2, RFC 6266).
///
/// Parsing accepts what real clients send when it is unambiguous — unquoted values, raw
/// UTF-8, `filename*=UTF-8''…` (RFC 8187), browsers' raw backslashes, a bare token or an
/// inline `Content-Type:` after a `;` — and reports each repair in `anomalies`. It refuses
/// what could be read two ways: duplicate parameters, characters after a closing quote, a
/// `filename*` that names another file than `filename`, control characters.
public struct ContentDisposition: Equatable, Sendable {
    /// Repairs made while parsing; the multipart parser turns them into request anomalies.
    public struct Anomalies: OptionSet, Hashable, Sendable {
        public let rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }

        /// A parameter value was not quoted (`name=file`).
        public static let unquotedValue = Anomalies(rawValue: 1 << 0)
        /// The file name came from (or was confirmed by) `filename*`.
        public static let extendedFilename = Anomalies(rawValue: 1 << 1)
        /// `Content-Type: …` appeared inside the disposition after a `;`.
        public static let inlineContentType = Anomalies(rawValue: 1 << 2)
        /// A bare token without `=` appeared after a `;` and was ignored.
        public static let ignoredJunk = Anomalies(rawValue: 1 << 3)
    }

    /// The disposition type in lower case; `form-data` in multipart/form-data.
    public var type: String
    /// The `name` parameter: the form field name.
    public var name: [UInt8]?
    /// The file name: `filename`, or the decoded `filename*` when only that was sent.
    public var filename: [UInt8]?
    /// Other parameters, in order.
    public var parameters: [HeaderParameter]
    /// A `Content-Type` value found inline after a `;`, if any.
    public var inlineContentType: [UInt8]?
    /// Repairs made while parsing.
    public var anomalies: Anomalies

    /// Creates a `form-data` disposition.
    public init(name: [UInt8]?, filename: [UInt8]? = nil) {
        self.type = "form-data"
        self.name = name
        self.filename = filename
        self.parameters = []
        self.inlineContentType = nil
        self.anomalies = []
    }

    /// Creates a `form-data` disposition from strings.
    public init(name: String, filename: String? = nil) {
        self.init(name: Array(name.utf8), filename: filename.map { Array($0.utf8) })
    }

    /// The field name decoded as UTF-8.
    public var nameString: String? { name.map { String(decoding: $0, as: UTF8.self) } }
    /// The file name decoded as UTF-8 (invalid sequences become U+FFFD).
    public var filenameString: String? { filename.map { String(decoding: $0, as: UTF8.self) } }
    /// A part is a file when it carries a file name, even an empty one.
    public var isFile: Bool { filename != nil }
}

extension ContentDisposition {
    /// Parses a `Content-Disposition` value.
    ///
    /// - Throws: `HTTPCoreError` naming the reason and the byte offset within `value`.
    public static func parse(_ value: some Collection<UInt8>) throws(HTTPCoreError) -> ContentDisposition {
        var buffers = ValueBuffers()
        return try parse(value, reusing: &buffers)
    }

    /// The buffers a disposition's `name` and `filename` are read into, kept from one parse to
    /// the next (a multipart parser's, part to part): once the disposition read into them is
    /// gone, the next parse fills them without allocating.
    public struct ValueBuffers: Sendable {
        var name: [UInt8] = []
        var filename: [UInt8] = []

        /// Empty buffers.
        public init() {}

        /// The most bytes one of them holds room for (a keeper drops larger ones).
        public var capacity: Int { max(name.capacity, filename.capacity) }
    }

    /// `parse(_:)` reading `name` and `filename` into `buffers` (emptied first, their capacity
    /// kept when nothing else holds them).
    public static func parse(_ value: some Collection<UInt8>, reusing buffers: inout ValueBuffers)
        throws(HTTPCoreError) -> ContentDisposition
    {
        if let plain = value.withContiguousStorageIfAvailable({ parsePlain($0, reusing: &buffers) }),
            let plain
        {
            return plain
        }
        return try parseGeneral(value, reusing: &buffers)
    }

    /// The shape nearly every client sends, `form-data; name="…"` and an optional
    /// `; filename="…"`, each value quoted and plain (no backslash, quote or control byte), read
    /// in one pass into the result `parseGeneral` gives it; nil for anything else, which
    /// `parseGeneral` then reads (repairs, other parameters, errors).
    static func parsePlain(_ value: UnsafeBufferPointer<UInt8>, reusing buffers: inout ValueBuffers)
        -> ContentDisposition?
    {
        guard let base = value.baseAddress else { return nil }
        let count = value.count
        var index = 0
        func expect(_ literal: StaticString) -> Bool {
            let length = literal.utf8CodeUnitCount
            guard count - index >= length, memcmp(base + index, literal.utf8Start, length) == 0 else {
                return false
            }
            index += length
            return true
        }
        // A quoted value's content, the opening quote read; the closing one is consumed.
        func quoted() -> Range<Int>? {
            let start = index
            while index < count {
                let byte = base[index]
                if byte == UInt8(ascii: "\"") {
                    index += 1
                    return start..<(index - 1)
                }
                if byte == UInt8(ascii: "\\") || ByteClass.isForbiddenInFieldValue(byte) { return nil }
                index += 1
            }
            return nil
        }
        guard expect("form-data; name=\""), let name = quoted() else { return nil }
        var filename: Range<Int>?
        if index < count {
            guard expect("; filename=\""), let range = quoted(), index == count else { return nil }
            filename = range
        }
        buffers.name.removeAll(keepingCapacity: true)
        buffers.name.append(contentsOf: UnsafeBufferPointer(rebasing: value[name]))
        var result = ContentDisposition(name: buffers.name)
        if let filename {
            buffers.filename.removeAll(keepingCapacity: true)
            buffers.filename.append(contentsOf: UnsafeBufferPointer(rebasing: value[filename]))
            result.filename = buffers.filename
        }
        return result
    }

    /// The full grammar, with its repairs and refusals (see the type's notes).
    static func parseGeneral(_ value: some Collection<UInt8>, reusing buffers: inout ValueBuffers)
        throws(HTTPCoreError) -> ContentDisposition
    {
        var scanner = ParameterScanner(value)
        scanner.skipWhitespace()
        let type = scanner.token()
        guard !type.isEmpty else {
            throw HTTPCoreError(scanner.isAtEnd ? .empty : .invalidParameter, at: scanner.index)
        }
        var result = ContentDisposition(name: nil)
        if !asciiCaseInsensitiveEquals(type, "form-data") { result.type = type.lowercasedASCIIString }
        var plainFilename: [UInt8]?
        var extendedFilename: [UInt8]?
        // `name`, `filename` and `filename*` seen (bits 0, 1, 2), without an array for them.
        var seenKnown: UInt8 = 0
        var seenOthers: [ArraySlice<UInt8>] = []
        var more = try scanner.parameterSeparator()
        while more {
            scanner.skipWhitespace()
            if scanner.isAtEnd { break }
            if scanner.consume(UInt8(ascii: ";")) { continue }
            let nameStart = scanner.index
            let name = scanner.token()
            guard !name.isEmpty else { throw HTTPCoreError(.invalidParameter, at: scanner.index) }
            scanner.skipWhitespace()
            if scanner.consume(UInt8(ascii: ":")) {
                try result.takeInlineHeader(name, &scanner, at: nameStart)
                break
            }
            if scanner.isAtEnd || scanner.current == UInt8(ascii: ";") {
                result.anomalies.insert(.ignoredJunk)
                more = try scanner.parameterSeparator()
                continue
            }
            guard scanner.consume(UInt8(ascii: "=")) else {
                throw HTTPCoreError(.invalidParameter, at: scanner.index)
            }
            scanner.skipWhitespace()
            let isExtendedFilename = asciiCaseInsensitiveEquals(name, "filename*")
            let known: UInt8 =
                asciiCaseInsensitiveEquals(name, "name")
                ? 1 : asciiCaseInsensitiveEquals(name, "filename") ? 2 : isExtendedFilename ? 4 : 0
            let repeated =
                known != 0
                ? seenKnown & known != 0 : seenOthers.contains { asciiCaseInsensitiveEquals($0, name) }
            guard !repeated else {
                throw HTTPCoreError(.duplicateParameter(name.lowercasedASCIIString), at: nameStart)
            }
            seenKnown |= known
            if known == 0 { seenOthers.append(name) }
            let valueStart = scanner.index
            let quoted = scanner.current == UInt8(ascii: "\"")
            if !quoted, !isExtendedFilename { result.anomalies.insert(.unquotedValue) }
            switch known {
            case 1:
                buffers.name.removeAll(keepingCapacity: true)
                try scanner.value(quoted: quoted, into: &buffers.name)
                result.name = buffers.name
            case 2:
                buffers.filename.removeAll(keepingCapacity: true)
                try scanner.value(quoted: quoted, into: &buffers.filename)
                plainFilename = buffers.filename
            default:
                var value: [UInt8] = []
                try scanner.value(quoted: quoted, into: &value)
                if isExtendedFilename {
                    guard !quoted else { throw HTTPCoreError(.invalidExtendedValue, at: valueStart) }
                    extendedFilename = try decodeExtendedValue(value, at: valueStart)
                } else {
                    result.parameters.append(
                        HeaderParameter(name: name.lowercasedASCIIString, value: value, wasQuoted: quoted))
                }
            }
            more = try scanner.parameterSeparator()
        }
        if let extendedFilename {
            if let plainFilename, plainFilename != extendedFilename {
                throw HTTPCoreError(.filenameMismatch, at: 0)
            }
            result.anomalies.insert(.extendedFilename)
            result.filename = extendedFilename
        } else {
            result.filename = plainFilename
        }
        return result
    }

    /// Parses a `Content-Disposition` value given as a string.
    public static func parse(_ value: String) throws(HTTPCoreError) -> ContentDisposition {
        try parse(Array(value.utf8))
    }

    /// `Content-Type: x/y` written inside the disposition (a hand-built iOS body): it runs to
    /// the end of the value. Any other inline header is refused.
    private mutating func takeInlineHeader(
        _ name: ArraySlice<UInt8>, _ scanner: inout ParameterScanner, at offset: Int
    ) throws(HTTPCoreError) {
        guard asciiCaseInsensitiveEquals(name, "content-type"), inlineContentType == nil else {
            throw HTTPCoreError(.invalidParameter, at: offset)
        }
        scanner.skipWhitespace()
        let rest = scanner.rest()
        _ = try MediaType.parse(rest)
        var end = rest.endIndex
        while end > rest.startIndex, rest[end - 1] == 0x20 || rest[end - 1] == 0x09 { end -= 1 }
        inlineContentType = Array(rest[rest.startIndex..<end])
        anomalies.insert(.inlineContentType)
    }

    /// Decodes an RFC 8187 `ext-value`: `charset'language'pct-encoded`, charset UTF-8 or
    /// ISO-8859-1; the result is UTF-8.
    static func decodeExtendedValue(_ value: [UInt8], at offset: Int) throws(HTTPCoreError) -> [UInt8] {
        let quote = UInt8(ascii: "'")
        guard let first = value.firstIndex(of: quote),
            let second = value[(first + 1)...].firstIndex(of: quote)
        else { throw HTTPCoreError(.invalidExtendedValue, at: offset) }
        let charset = value[..<first].lowercasedASCIIString
        guard charset == "utf-8" || charset == "iso-8859-1" else {
            throw HTTPCoreError(.invalidExtendedValue, at: offset)
        }
        var decoded: [UInt8] = []
        var index = second + 1
        while index < value.count {
            let byte = value[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < value.count, let high = Hex.value(of: value[index + 1]),
                    let low = Hex.value(of: value[index + 2])
                else { throw HTTPCoreError(.invalidExtendedValue, at: offset + index) }
                decoded.append(high << 4 | low)
                index += 3
            } else if isAttributeChar(byte) {
                decoded.append(byte)
                index += 1
            } else {
                throw HTTPCoreError(.invalidExtendedValue, at: offset + index)
            }
        }
        // Percent-decoding must not smuggle in what a quoted value may not hold (NUL, CR, LF…).
        if decoded.contains(where: ByteClass.isForbiddenInFieldValue) {
            throw HTTPCoreError(.controlCharacter, at: offset)
        }
        if charset == "iso-8859-1" {
            var scalars = String.UnicodeScalarView()
            for byte in decoded { scalars.append(Unicode.Scalar(byte)) }
            return Array(String(scalars).utf8)
        }
        guard String(validating: decoded, as: UTF8.self) != nil else {
            throw HTTPCoreError(.invalidExtendedValue, at: offset)
        }
        return decoded
    }

    /// `attr-char` of RFC 8187.
    private static func isAttributeChar(_ byte: UInt8) -> Bool {
        ByteClass.isTokenChar(byte) && byte != UInt8(ascii: "*") && byte != UInt8(ascii: "'")
            && byte != UInt8(ascii: "%")
    }
}

extension ParameterScanner {
    /// A disposition parameter's value, quoted (backslashes literal but before `"` and `\\`)
    /// or not, appended to `value`.
    fileprivate mutating func value(quoted: Bool, into value: inout [UInt8]) throws(HTTPCoreError) {
        if quoted {
            try quotedString(escapesAnyByte: false, into: &value)
        } else {
            try unquotedValue(into: &value)
        }
    }
}
