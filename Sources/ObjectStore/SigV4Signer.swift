import HTTPCore
public import UploadRules

/// SigV4 header signing (AWS's "Authorization header" form): the canonical request, the string
/// to sign and the `Authorization` value, pure (the key chain and HMAC are `SigV4`'s).
///
/// The caller puts `host`, `x-amz-date` and `x-amz-content-sha256` among the headers to sign;
/// every header given is signed.
public struct SigV4Signer: Sendable {
    public let scope: SigV4
    public let accessKey: String
    /// Never logged, never part of a description.
    private let secretKey: String

    public init(region: String, accessKey: String, secretKey: String) {
        scope = .aws(region: region)
        self.accessKey = accessKey
        self.secretKey = secretKey
    }

    /// SHA-256 of an empty payload, hex.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// The canonical request of `method` on `path` (already URI-encoded, as sent), `query`
    /// (raw names and values: encoded here) and `headers`, and its signed-header list.
    public static func canonicalRequest(
        method: String, path: String, query: [(String, String)], headers: [(String, String)],
        payloadHash: String
    ) -> (request: String, signedHeaders: String) {
        var encoded: [(name: String, value: String)] = []
        for (name, value) in query {
            encoded.append((uriEncode(name, keepSlash: false), uriEncode(value, keepSlash: false)))
        }
        encoded.sort { (left: (name: String, value: String), right: (name: String, value: String)) -> Bool in
            left.name == right.name ? left.value < right.value : left.name < right.name
        }
        let canonicalQuery = encoded.map { $0.name + "=" + $0.value }.joined(separator: "&")
        var canonicalHeaders: [(name: String, value: String)] = []
        for (name, value) in headers { canonicalHeaders.append((name.lowercased(), trimmed(value))) }
        canonicalHeaders.sort {
            (left: (name: String, value: String), right: (name: String, value: String)) -> Bool in
            left.name < right.name
        }
        let signed = canonicalHeaders.map(\.name).joined(separator: ";")
        let request = [
            method, path, canonicalQuery,
            canonicalHeaders.map { "\($0.name):\($0.value)\n" }.joined(), signed, payloadHash,
        ].joined(separator: "\n")
        return (request, signed)
    }

    /// The string to sign for a canonical request made at `amzDate` (`yyyymmddThhmmssZ`).
    public func stringToSign(canonicalRequest: String, amzDate: String) -> String {
        let hash = Hex.encode(SHA256.digest(Array(canonicalRequest.utf8)))
        return [scope.algorithm, amzDate, scope.scope(date: String(amzDate.prefix(8))), hash]
            .joined(separator: "\n")
    }

    /// The `Authorization` header's value for the request.
    public func authorization(
        method: String, path: String, query: [(String, String)], headers: [(String, String)],
        payloadHash: String, amzDate: String
    ) -> String {
        let (request, signed) = Self.canonicalRequest(
            method: method, path: path, query: query, headers: headers, payloadHash: payloadHash)
        let date = String(amzDate.prefix(8))
        let signature = scope.signature(
            secret: secretKey, date: date,
            stringToSign: stringToSign(canonicalRequest: request, amzDate: amzDate))
        return "\(scope.algorithm) Credential=\(scope.credential(accessKey: accessKey, date: date)), "
            + "SignedHeaders=\(signed), Signature=\(signature)"
    }

    /// SigV4's URI encoding: unreserved bytes (`A-Z a-z 0-9 - . _ ~`) as they are, `/` as it is
    /// when `keepSlash` (an object key's path), every other byte `%XX` (upper-case hex).
    public static func uriEncode(_ text: String, keepSlash: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.append(byte)
            case UInt8(ascii: "/") where keepSlash:
                out.append(byte)
            default:
                out.append(UInt8(ascii: "%"))
                out.append(Hex.upperDigits[Int(byte >> 4)])
                out.append(Hex.upperDigits[Int(byte & 15)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A header value as signed: outer spaces trimmed, inner runs of spaces as one.
    private static func trimmed(_ value: String) -> String {
        var out = ""
        var space = false
        for character in value.trimmingSpaces {
            if character == " " || character == "\t" {
                space = true
                continue
            }
            if space { out.append(" ") }
            space = false
            out.append(character)
        }
        return out
    }
}

extension String {
    fileprivate var trimmingSpaces: Substring {
        var text = self[...]
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }
}
