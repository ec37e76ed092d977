/// A media type as in a `Content-Type` header: `type/subtype` with parameters.
///
/// Parsing is strict and single-pass: tokens per RFC 9110, no whitespace around `=`,
/// quoted strings with backslash escapes, parameter names case-insensitive and unique. A
/// caller may accept `,` between parameters (`Anomalies.commaSeparatedParameters`).
public struct MediaType: Equatable, Sendable, CustomStringConvertible {
    /// Lenient forms a caller may accept, and the ones a parse met.
    public struct Anomalies: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// A `,` separates parameters where `;` belongs (`multipart/form-data, boundary=x`, as
        /// RFC 1867 §6 and several upload tutorials write it). Each parameter must still be
        /// `name=value` and appear once, so two boundaries stay an error.
        public static let commaSeparatedParameters = Anomalies(rawValue: 1 << 0)
    }

    /// The top-level type in lower case (`image`).
    public var type: String
    /// The subtype in lower case (`png`).
    public var subtype: String
    /// Parameters in the order received; names are lower case and unique.
    public var parameters: [HeaderParameter]
    /// The lenient forms this value used (only those the parse accepted).
    public var anomalies: Anomalies = []

    /// Creates a media type; `type` and `subtype` are folded to lower case.
    public init(type: String, subtype: String, parameters: [HeaderParameter] = []) {
        self.type = type.lowercased()
        self.subtype = subtype.lowercased()
        self.parameters = parameters
    }

    /// Parses a `Content-Type` value.
    ///
    /// - Parameter leniency: the lenient forms to accept; each one met is in `anomalies`.
    /// - Throws: `HTTPCoreError` naming the reason and the byte offset within `value`.
    public static func parse(_ value: some Collection<UInt8>, accepting leniency: Anomalies = [])
        throws(HTTPCoreError) -> MediaType
    {
        try parse(value, accepting: leniency, reusing: nil)
    }

    /// `parse(_:accepting:)` in the storage of `spare` (a media type parsed earlier, given up):
    /// its parameter list and its last parameter's value buffer are reused when nothing else
    /// holds them, so a connection's next `multipart/form-data; boundary=…` allocates nothing.
    public static func parse(
        _ value: some Collection<UInt8>, accepting leniency: Anomalies = [],
        reusing spare: consuming MediaType?
    ) throws(HTTPCoreError) -> MediaType {
        var parameters: [HeaderParameter] = []
        var recycled: [UInt8] = []
        if let spare = spare.take() {
            parameters = spare.parameters
            if let last = parameters.last { recycled = last.value }
        }
        // Unique now (the spare is gone): the list keeps its room and releases the values.
        parameters.removeAll(keepingCapacity: true)
        var anomalies: Anomalies = []
        func separator(_ scanner: inout ParameterScanner) throws(HTTPCoreError) -> Bool {
            if leniency.contains(.commaSeparatedParameters) {
                scanner.skipWhitespace()
                if scanner.consume(UInt8(ascii: ",")) {
                    anomalies.insert(.commaSeparatedParameters)
                    return true
                }
            }
            return try scanner.parameterSeparator()
        }
        var scanner = ParameterScanner(value)
        scanner.skipWhitespace()
        let type = scanner.token()
        guard !type.isEmpty else {
            throw HTTPCoreError(scanner.isAtEnd ? .empty : .invalidMediaType, at: scanner.index)
        }
        guard scanner.consume(UInt8(ascii: "/")) else {
            throw HTTPCoreError(.invalidMediaType, at: scanner.index)
        }
        let subtype = scanner.token()
        guard !subtype.isEmpty else { throw HTTPCoreError(.invalidMediaType, at: scanner.index) }
        var more = try separator(&scanner)
        while more {
            scanner.skipWhitespace()
            if scanner.isAtEnd { break }
            if scanner.current == UInt8(ascii: ";") {
                scanner.advance()
                continue
            }
            let nameStart = scanner.index
            let name = scanner.token()
            guard !name.isEmpty, scanner.consume(UInt8(ascii: "=")) else {
                throw HTTPCoreError(.invalidParameter, at: scanner.index)
            }
            let parameter: HeaderParameter
            // The first value is read into the recycled buffer, later ones into new ones.
            var value: [UInt8] = []
            swap(&value, &recycled)
            value.removeAll(keepingCapacity: true)
            if scanner.current == UInt8(ascii: "\"") {
                try scanner.quotedString(escapesAnyByte: true, into: &value)
                parameter = HeaderParameter(name: name.lowercasedASCIIString, value: value, wasQuoted: true)
            } else {
                let token = scanner.token()
                guard !token.isEmpty else { throw HTTPCoreError(.invalidParameter, at: scanner.index) }
                value.append(contentsOf: token)
                parameter = HeaderParameter(name: name.lowercasedASCIIString, value: value, wasQuoted: false)
            }
            if parameters.contains(where: { $0.name == parameter.name }) {
                throw HTTPCoreError(.duplicateParameter(parameter.name), at: nameStart)
            }
            parameters.append(parameter)
            more = try separator(&scanner)
        }
        var result = MediaType(
            type: type.lowercasedASCIIString, subtype: subtype.lowercasedASCIIString,
            parameters: parameters)
        result.anomalies = anomalies
        return result
    }

    /// Parses a `Content-Type` value given as a string.
    public static func parse(_ value: String, accepting leniency: Anomalies = []) throws(HTTPCoreError)
        -> MediaType
    {
        try parse(Array(value.utf8), accepting: leniency)
    }

    /// `type/subtype` without parameters.
    public var essence: String { "\(type)/\(subtype)" }

    /// The value of parameter `name` (case-insensitive), as bytes.
    public func parameter(_ name: String) -> [UInt8]? {
        let lowered = name.lowercased()
        return parameters.first { $0.name == lowered }?.value
    }

    /// True for `multipart/form-data`.
    public var isMultipartFormData: Bool { type == "multipart" && subtype == "form-data" }

    /// The `boundary` parameter, validated against RFC 2046 §5.1.1: 1 to 70 characters from
    /// `bchars`, not ending in a space.
    ///
    /// - Throws: `.invalidBoundary` when missing or malformed.
    public func multipartBoundary() throws(HTTPCoreError) -> [UInt8] {
        guard let boundary = parameter("boundary") else {
            throw HTTPCoreError(.invalidBoundary, at: 0)
        }
        try Self.validateBoundary(boundary)
        return boundary
    }

    /// Checks a boundary against RFC 2046 §5.1.1.
    public static func validateBoundary(_ boundary: some Collection<UInt8>) throws(HTTPCoreError) {
        var count = 0
        var last: UInt8 = 0
        var bad: Int?
        for byte in boundary {
            if bad == nil, !ByteClass.isBoundaryChar(byte) { bad = count }
            last = byte
            count += 1
        }
        guard (1...70).contains(count), last != 0x20 else {
            throw HTTPCoreError(.invalidBoundary, at: min(count, 70))
        }
        if let bad { throw HTTPCoreError(.invalidBoundary, at: bad) }
    }

    /// Whether this type matches `pattern`: `*/*`, `type/*` or an exact `type/subtype`.
    public func matches(_ pattern: String) -> Bool {
        let parts = pattern.lowercased().split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return false }
        if parts[0] == "*" { return parts[1] == "*" }
        return parts[0] == type && (parts[1] == "*" || parts[1] == subtype)
    }

    /// Canonical form: lower-case type and names, values quoted when they are not tokens.
    public var serialized: [UInt8] {
        var out = Array(essence.utf8)
        for parameter in parameters {
            out.append(contentsOf: "; \(parameter.name)=".utf8)
            if !parameter.value.isEmpty && parameter.value.allSatisfy(ByteClass.isTokenChar) {
                out.append(contentsOf: parameter.value)
            } else {
                out.append(UInt8(ascii: "\""))
                for byte in parameter.value {
                    if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                        out.append(UInt8(ascii: "\\"))
                    }
                    out.append(byte)
                }
                out.append(UInt8(ascii: "\""))
            }
        }
        return out
    }

    public var description: String { String(decoding: serialized, as: UTF8.self) }
}
