public import HTTP1
import HTTPCore

/// Where a route's credential is in the request head (`token_from:`); the default is
/// `Authorization: Bearer`.
///
/// Every source insists on one credential: two `Authorization` fields, two fields of the
/// named header, two cookies or two query parameters of the name are `ambiguous`, never
/// "the first one", so a proxy in front and FormGate cannot disagree on which was checked.
public enum TokenSource: Equatable, Sendable {
    /// `Authorization: Bearer TOKEN` (RFC 6750 section 2.1): the scheme in any case, one or
    /// more spaces, the token; exactly one `Authorization` field.
    case bearer
    /// The whole value of the header field of this name (any case); exactly one such field.
    case header(String)
    /// The cookie of this name (exact case) in the `Cookie` field(s) (RFC 6265 section 5.4),
    /// surrounding double quotes removed.
    case cookie(String)
    /// The query parameter of this name in the request target, percent-decoded (`+` is kept:
    /// base64url tokens never contain it).
    case query(String)

    /// Why no credential was taken.
    public enum Failure: String, Error, Sendable {
        /// The request carries no credential where this source looks.
        case missing
        /// The request carries more than one.
        case ambiguous
        /// The place holds something that is not a credential (bad percent-encoding, an
        /// `Authorization` field of another scheme, an empty value).
        case malformed
    }

    /// The credential's bytes in `head`, or why there is none.
    public func token(in head: RequestHead) -> Result<ArraySlice<UInt8>, Failure> {
        switch self {
        case .bearer: Self.bearerToken(head.headers)
        case .header(let name): Self.singleField(head.headers, name)
        case .cookie(let name): Self.cookieValue(head.headers, Array(name.utf8))
        case .query(let name): Self.queryParameter(head.target, Array(name.utf8))
        }
    }

    private static func singleField(_ headers: HeaderFields, _ name: String) -> Result<
        ArraySlice<UInt8>, Failure
    > {
        switch headers.count(of: name) {
        case 0: return .failure(.missing)
        case 1: break
        default: return .failure(.ambiguous)
        }
        guard let value = headers.firstValue(name), !value.isEmpty else { return .failure(.malformed) }
        return .success(value)
    }

    private static func bearerToken(_ headers: HeaderFields) -> Result<ArraySlice<UInt8>, Failure> {
        let value: ArraySlice<UInt8>
        switch singleField(headers, "Authorization") {
        case .success(let found): value = found
        case .failure(let failure): return .failure(failure)
        }
        let scheme = "bearer".utf8
        guard value.count > scheme.count, asciiCaseInsensitiveEquals(value.prefix(scheme.count), scheme),
            value[value.startIndex + scheme.count] == 0x20
        else { return .failure(.malformed) }
        let token = value.dropFirst(scheme.count).drop { $0 == 0x20 }
        // token68: no spaces inside (the parser already trimmed the end).
        guard !token.isEmpty, !token.contains(0x20), !token.contains(0x09) else {
            return .failure(.malformed)
        }
        return .success(token)
    }
}

extension TokenSource {
    /// The value of the one cookie called `name` across every `Cookie` field; other cookies
    /// are skipped in place, without copying.
    private static func cookieValue(_ headers: HeaderFields, _ name: [UInt8]) -> Result<
        ArraySlice<UInt8>, Failure
    > {
        var found: ArraySlice<UInt8>?
        var count = 0
        headers.forEachField { field, value in
            guard asciiCaseInsensitiveEquals(field, "cookie".utf8) else { return }
            var start = 0
            while start < value.count {
                let end = value[start...].firstIndex(of: UInt8(ascii: ";")) ?? value.count
                var first = start
                while first < end, value[first] == 0x20 || value[first] == 0x09 { first += 1 }
                let pair = value[first..<end]
                if let equals = pair.firstIndex(of: UInt8(ascii: "=")),
                    pair[first..<equals].elementsEqual(name)
                {
                    count += 1
                    if count == 1 { found = ArraySlice(pair[(equals + 1)...]) }
                }
                start = end + 1
            }
        }
        guard count <= 1 else { return .failure(.ambiguous) }
        guard var token = found else { return .failure(.missing) }
        while let last = token.last, last == 0x20 || last == 0x09 { token = token.dropLast() }
        if token.count >= 2, token.first == UInt8(ascii: "\""), token.last == UInt8(ascii: "\"") {
            token = token.dropFirst().dropLast()
        }
        guard !token.isEmpty else { return .failure(.malformed) }
        return .success(token)
    }

    /// The one query parameter called `name` (names compared after percent-decoding).
    private static func queryParameter(_ target: String, _ name: [UInt8]) -> Result<
        ArraySlice<UInt8>, Failure
    > {
        let bytes = Array(target.utf8)
        guard let question = bytes.firstIndex(of: UInt8(ascii: "?")) else { return .failure(.missing) }
        var found: [UInt8]?
        var start = question + 1
        let end = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.count
        while start < end {
            let stop = bytes[start..<end].firstIndex(of: UInt8(ascii: "&")) ?? end
            let pair = bytes[start..<stop]
            let equals = pair.firstIndex(of: UInt8(ascii: "=")) ?? stop
            guard let key = percentDecoded(bytes[start..<equals]) else { return .failure(.malformed) }
            if key == name {
                guard found == nil else { return .failure(.ambiguous) }
                guard equals < stop, let value = percentDecoded(bytes[(equals + 1)..<stop]) else {
                    return .failure(.malformed)
                }
                found = value
            }
            start = stop + 1
        }
        guard let found else { return .failure(.missing) }
        guard !found.isEmpty else { return .failure(.malformed) }
        return .success(found[...])
    }

    /// `bytes` with `%XX` escapes decoded, or `nil` for a `%` not followed by two hex digits.
    static func percentDecoded(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                index += 1
                continue
            }
            guard index + 3 <= bytes.endIndex,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            else { return nil }
            out.append(high << 4 | low)
            index += 3
        }
        return out
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
