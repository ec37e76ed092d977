import HTTPCore

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
        var out = ""
        for piece in pieces {
            switch piece {
            case .literal(let text): out += text
            case .uuid: out += uuid(&random)
            case .random: out += Hex.random(words: 1, using: &random)
            case .ext: out += values.ext
            case .basename: out += values.basename
            case .original: out += values.original
            case .field: out += values.field
            case .index: out += "\(values.index)"
            case .date: out += values.date
            case .time: out += "\(values.time)"
            case .filename: out += values.filename
            case .header(let name): out += values.header(name) ?? ""
            case .authSubject: out += values.identity?.subject ?? ""
            case .authClaim(let name): out += values.identity?.claims[name] ?? ""
            case .authAttribute(let name): out += values.identity?.attribute(name) ?? ""
            }
        }
        return out
    }

    /// A random (version 4) UUID in lower case.
    private func uuid(_ random: inout some RandomNumberGenerator) -> String {
        let first = random.next() as UInt64
        let second = random.next() as UInt64
        return String(unsafeUninitializedCapacity: 36) { out in
            var written = 0
            for index in 0..<16 {
                var byte = UInt8(truncatingIfNeeded: (index < 8 ? first : second) >> (8 * UInt64(index % 8)))
                if index == 6 { byte = byte & 0x0F | 0x40 }  // version 4
                if index == 8 { byte = byte & 0x3F | 0x80 }  // RFC 4122 variant
                if index == 4 || index == 6 || index == 8 || index == 10 {
                    out[written] = UInt8(ascii: "-")
                    written += 1
                }
                out[written] = Hex.digits[Int(byte >> 4)]
                out[written + 1] = Hex.digits[Int(byte & 15)]
                written += 2
            }
            return written
        }
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
    /// Request headers, by name.
    public var header: @Sendable (String) -> String? = { _ in nil }
    /// Who sent the request, when the route has `auth:` (`{auth:…}`; empty without).
    public var identity: Identity?

    public init() {}
}
