public import HTTPCore

/// A compiled `{variable}` template (filename, inject values, Qiniu scope): literal text and
/// variables, parsed once at configuration load.
public struct Template: Sendable, Equatable {
    /// One piece of a template.
    public enum Piece: Sendable, Equatable {
        case literal(String)
        case uuid, random, ext, basename, original, field, index, date, time, filename
        case header(String)
        /// `{auth:sub}`: the identity's subject.
        case authSubject
        /// `{auth:claim:NAME}`: a claim of the client's token.
        case authClaim(String)
        /// `{auth:NAME}`: an identity header from the auth service.
        case authAttribute(String)
    }

    /// What went wrong compiling a template.
    public struct CompileError: Error, Equatable, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    public let pieces: [Piece]

    /// Compiles `text`; `{{` and `}}` stand for literal braces.
    public init(_ text: String) throws(CompileError) {
        var pieces: [Piece] = []
        var literal = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            let next = text.index(after: index)
            if character == "{", next < text.endIndex, text[next] == "{" {
                literal.append("{")
                index = text.index(after: next)
                continue
            }
            if character == "}", next < text.endIndex, text[next] == "}" {
                literal.append("}")
                index = text.index(after: next)
                continue
            }
            if character == "}" { throw CompileError(message: "unmatched } in template '\(text)'") }
            guard character == "{" else {
                literal.append(character)
                index = next
                continue
            }
            guard let close = text[next...].firstIndex(of: "}") else {
                throw CompileError(message: "unclosed { in template '\(text)'")
            }
            let name = String(text[next..<close])
            if !literal.isEmpty {
                pieces.append(.literal(literal))
                literal = ""
            }
            pieces.append(try Self.piece(name, in: text))
            index = text.index(after: close)
        }
        if !literal.isEmpty { pieces.append(.literal(literal)) }
        self.pieces = pieces
    }

    static func piece(_ name: String, in text: String) throws(CompileError) -> Piece {
        switch name {
        case "uuid": return .uuid
        case "random": return .random
        case "ext": return .ext
        case "basename": return .basename
        case "original": return .original
        case "field": return .field
        case "index": return .index
        case "date": return .date
        case "time": return .time
        case "filename": return .filename
        default:
            if name.hasPrefix("header:"), name.count > 7 { return .header(String(name.dropFirst(7))) }
            if name == "auth:sub" { return .authSubject }
            if name.hasPrefix("auth:claim:"), name.count > 11 {
                return .authClaim(String(name.dropFirst(11)))
            }
            if name.hasPrefix("auth:"), name.count > 5, !name.hasPrefix("auth:claim:") {
                return .authAttribute(String(name.dropFirst(5)))
            }
            throw CompileError(
                message:
                    "unknown variable {\(name)} in '\(text)' (known: uuid, random, ext, basename, original, field, index, date, time, filename, header:NAME, auth:sub, auth:claim:NAME, auth:NAME)"
            )
        }
    }

    /// Whether the template uses `{filename}` (so it must wait for a file part).
    public var usesFilename: Bool { pieces.contains(.filename) }

    /// Whether the template reads the identity (`{auth:…}`), which needs a route with `auth:`.
    public var usesIdentity: Bool {
        pieces.contains {
            switch $0 {
            case .authSubject, .authClaim, .authAttribute: true
            default: false
            }
        }
    }

    /// Fills the template.
    public func render(_ values: TemplateValues, random: inout some RandomNumberGenerator) -> String {
        if let length = exactLength(values) {
            // Every piece's length is known: the result is written in place, one allocation
            // (none for 15 bytes or fewer).
            return String(unsafeUninitializedCapacity: length) { out in
                var at = 0
                for piece in pieces { at = write(piece, values, into: out, at: at, &random) }
                return at
            }
        }
        var out = ""
        for piece in pieces {
            switch piece {
            case .literal(let text): out += text
            case .uuid, .random, .index, .time:
                // Written in place like the other path, then appended.
                let length = piece == .uuid ? 36 : piece == .random ? 16 : 21
                out += String(unsafeUninitializedCapacity: length) { text in
                    write(piece, values, into: text, at: 0, &random)
                }
            case .ext: out += values.ext
            case .basename: out += values.basename
            case .original: out += values.original
            case .field: out += values.field
            case .date: out += values.date
            case .filename: out += values.filename
            case .header(let name): out += values.header(name) ?? ""
            case .authSubject: out += values.identity?.subject ?? ""
            case .authClaim(let name): out += values.identity?.claims[name] ?? ""
            case .authAttribute(let name): out += values.identity?.attribute(name) ?? ""
            }
        }
        return out
    }

    /// The UTF-8 length `render` writes, when no piece needs a lookup (headers, identity).
    private func exactLength(_ values: TemplateValues) -> Int? {
        var total = 0
        for piece in pieces {
            switch piece {
            case .literal(let text): total += text.utf8.count
            case .uuid: total += 36
            case .random: total += 16
            case .ext: total += values.ext.utf8.count
            case .basename: total += values.basename.utf8.count
            case .original: total += values.original.utf8.count
            case .field: total += values.field.utf8.count
            case .date: total += values.date.utf8.count
            case .filename: total += values.filename.utf8.count
            case .index: total += Self.decimalLength(Int64(values.index))
            case .time: total += Self.decimalLength(values.time)
            case .header, .authSubject, .authClaim, .authAttribute: return nil
            }
        }
        return total
    }

    /// Writes one piece at `at` (room was counted by `exactLength`); returns the next offset.
    private func write(
        _ piece: Piece, _ values: TemplateValues, into out: UnsafeMutableBufferPointer<UInt8>, at: Int,
        _ random: inout some RandomNumberGenerator
    ) -> Int {
        func copy(_ text: String) -> Int {
            var text = text
            return text.withUTF8 { bytes in
                guard let base = bytes.baseAddress else { return at }
                (out.baseAddress! + at).update(from: base, count: bytes.count)
                return at + bytes.count
            }
        }
        switch piece {
        case .literal(let text): return copy(text)
        case .uuid: return Self.writeUUID(into: out, at: at, &random)
        case .random:
            var word = random.next() as UInt64
            for digit in 0..<16 {
                out[at + digit] = Self.hexDigit(UInt8(truncatingIfNeeded: word & 15))
                word >>= 4
            }
            return at + 16
        case .ext: return copy(values.ext)
        case .basename: return copy(values.basename)
        case .original: return copy(values.original)
        case .field: return copy(values.field)
        case .date: return copy(values.date)
        case .filename: return copy(values.filename)
        case .index: return Self.writeDecimal(Int64(values.index), into: out, at: at)
        case .time: return Self.writeDecimal(values.time, into: out, at: at)
        case .header, .authSubject, .authClaim, .authAttribute: return at
        }
    }

    /// The digits (and sign) of `value` in decimal.
    private static func decimalLength(_ value: Int64) -> Int {
        var length = value < 0 ? 2 : 1
        var rest = value.magnitude / 10
        while rest > 0 {
            length += 1
            rest /= 10
        }
        return length
    }

    /// Writes `value` in decimal at `at`; returns the next offset.
    private static func writeDecimal(_ value: Int64, into out: UnsafeMutableBufferPointer<UInt8>, at: Int)
        -> Int
    {
        let end = at + decimalLength(value)
        var rest = value.magnitude
        var position = end
        repeat {
            position -= 1
            out[position] = UInt8(48 + rest % 10)
            rest /= 10
        } while rest > 0
        if value < 0 { out[at] = UInt8(ascii: "-") }
        return end
    }

    /// Writes a random (version 4) UUID in lower case at `at`; returns the next offset.
    private static func writeUUID(
        into out: UnsafeMutableBufferPointer<UInt8>, at: Int, _ random: inout some RandomNumberGenerator
    ) -> Int {
        let first = random.next() as UInt64
        let second = random.next() as UInt64
        var written = at
        for index in 0..<16 {
            var byte = UInt8(truncatingIfNeeded: (index < 8 ? first : second) >> (8 * UInt64(index % 8)))
            if index == 6 { byte = byte & 0x0F | 0x40 }  // version 4
            if index == 8 { byte = byte & 0x3F | 0x80 }  // RFC 4122 variant
            if index == 4 || index == 6 || index == 8 || index == 10 {
                out[written] = UInt8(ascii: "-")
                written += 1
            }
            out[written] = hexDigit(byte >> 4)
            out[written + 1] = hexDigit(byte & 15)
            written += 2
        }
        return written
    }

    /// The lower-case hex digit of a nibble.
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? 0x30 + nibble : 0x57 + nibble
    }

}

/// The values a template can use for one part.
public struct TemplateValues: Sendable {
    /// Lower-case extension with its dot (from the sniffed type when sniffing ran).
    public var ext = ""
    /// The sanitized original name without its extension.
    public var basename = ""
    /// The sanitized original name.
    public var original = ""
    /// The field name.
    public var field = ""
    /// The part's position, from 0.
    public var index = 0
    /// `YYYYMMDD`, UTC.
    public var date = ""
    /// Unix seconds.
    public var time: Int64 = 0
    /// The final file name (after the filename rule).
    public var filename = ""
    /// The request's headers and who sent it, shared by the values of all its parts.
    public var request = TemplateRequest.none

    public init() {}

    /// A request header's value (`{header:NAME}`).
    public func header(_ name: String) -> String? {
        request.headers[name]
    }

    /// Who sent the request, when the route has `auth:` (`{auth:…}`; empty without).
    public var identity: Identity? {
        get { request.identity }
        set { request = TemplateRequest(headers: request.headers, identity: newValue) }
    }
}

/// What the values of a request's parts share: its headers and identity (one reference, so
/// copying a part's values retains one object, not every header buffer and claim).
///
/// Its fields change only while nothing else holds it (`reusing`, `forget`): whoever holds one
/// sees it as it was made, so it is as immutable to them as a class of `let`s.
public final class TemplateRequest: @unchecked Sendable {
    /// The request's headers (`{header:NAME}`).
    public private(set) var headers: HeaderFields
    /// Who sent the request (`{auth:…}`).
    public private(set) var identity: Identity?

    /// No headers, no identity.
    public static let none = TemplateRequest()

    public init(headers: HeaderFields = HeaderFields(), identity: Identity? = nil) {
        self.headers = headers
        self.identity = identity
    }

    /// `spare` (a connection's last request's, taken) refilled when nothing else holds it, or
    /// a new one.
    static func reusing(_ spare: inout TemplateRequest?, headers: HeaderFields, identity: Identity?)
        -> TemplateRequest
    {
        guard var kept = spare.take(), isKnownUniquelyReferenced(&kept) else {
            return TemplateRequest(headers: headers, identity: identity)
        }
        kept.headers = headers
        kept.identity = identity
        return kept
    }

    /// `spare` emptied (nothing of its request kept: its headers' buffers are reused by the
    /// connection's next head), or dropped when something else still holds it.
    static func forget(_ spare: inout TemplateRequest?) {
        guard var kept = spare.take(), isKnownUniquelyReferenced(&kept) else { return }
        kept.headers = HeaderFields()
        kept.identity = nil
        spare = kept
    }
}
