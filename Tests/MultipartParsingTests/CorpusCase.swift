import Foundation
import HTTPCore
import MultipartParsing
import Testing

/// One entry of `Tests/Fixtures/corpus/manifest.json` (see `scripts/import-corpus.py`).
struct CorpusCase: Decodable, CustomTestStringConvertible, Sendable {
    struct Part: Decodable, Sendable {
        var name: String
        var filename: String?
        var contentType: String?
        var content: String?
        var decode: String?
    }
    struct FilePart: Decodable, Sendable {
        var name: String
        var filename: String
        var contentType: String
    }

    var id: String
    var body: String
    var http: Bool
    var sourceVerdict: String
    var verdict: String
    var boundary: String?
    var parts: [Part]?
    var filePart: FilePart?
    var partsPrefix: Bool?
    var anomalies: [String]?
    var error: String?
    var limits: [String: Int]?
    var why: String?

    var testDescription: String { id }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/corpus")

    static let all: [CorpusCase] = {
        struct Manifest: Decodable { var cases: [CorpusCase] }
        let data = try! Data(contentsOf: root.appendingPathComponent("manifest.json"))
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try! decoder.decode(Manifest.self, from: data).cases
    }()

    static func bytes(_ relative: String) -> [UInt8] {
        [UInt8](try! Data(contentsOf: root.appendingPathComponent(relative)))
    }

    var multipartLimits: MultipartLimits {
        var limits = MultipartLimits()
        for (key, value) in self.limits ?? [:] {
            switch key {
            case "parts": limits.parts = value
            case "fields": limits.fields = value
            case "files": limits.files = value
            case "partHeaderBytes": limits.partHeaderBytes = value
            case "fieldBytes": limits.fieldBytes = Int64(value)
            case "fileBytes": limits.fileBytes = Int64(value)
            default: preconditionFailure("unknown limit \(key)")
            }
        }
        return limits
    }

    /// The multipart body and its boundary; for whole HTTP requests, the boundary comes from
    /// the request's Content-Type (a thrown error means the request itself is refused).
    func input() throws -> (body: [UInt8], boundary: [UInt8]) {
        let raw = Self.bytes(body)
        guard http else { return (raw, Array(boundary!.utf8)) }
        let (head, body) = splitHTTPRequest(raw)
        let contentType = head.first { $0.lowercased().hasPrefix("content-type:") }!
        let value = contentType.drop { $0 != ":" }.dropFirst()
        let boundary = try MediaType.parse(Array(value.utf8)).multipartBoundary()
        return (body, boundary)
    }
}

/// Splits a raw HTTP/1.1 request into header lines and body (CRLF or bare-LF heads).
func splitHTTPRequest(_ raw: [UInt8]) -> (head: [String], body: [UInt8]) {
    for separator in [[UInt8]("\r\n\r\n".utf8), [UInt8]("\n\n".utf8)] {
        if let range = raw.firstRange(of: separator) {
            let head = String(decoding: raw[..<range.lowerBound], as: UTF8.self)
            let lines = head.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" }
                .map { String($0).trimmingCharacters(in: .whitespaces) }
            return (lines, Array(raw[range.upperBound...]))
        }
    }
    return ([], [])
}

/// Undoes a Content-Transfer-Encoding so content can be compared with a decoding oracle.
func decodeTransfer(_ bytes: [UInt8], _ encoding: String?) -> [UInt8] {
    switch encoding {
    case "base64":
        let text = String(decoding: bytes, as: UTF8.self).filter { !$0.isWhitespace }
        return [UInt8](Data(base64Encoded: text) ?? Data())
    case "quoted-printable":
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "="), index + 2 < bytes.count + 0 {
                if bytes[index + 1] == 0x0D, bytes[index + 2] == 0x0A {
                    index += 3
                    continue
                }
                if let value = UInt8(
                    String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16)
                {
                    out.append(value)
                    index += 3
                    continue
                }
            }
            out.append(bytes[index])
            index += 1
        }
        return out
    default:
        return bytes
    }
}
