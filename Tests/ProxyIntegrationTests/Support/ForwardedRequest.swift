import Foundation

/// What an upstream received on one connection, read without trusting the framing: the head,
/// the boundary of the forwarded Content-Type, and the body de-chunked as far as it goes.
struct ForwardedRequest {
    /// The head's field lines (empty until the blank line arrived).
    var fields: [(name: String, value: String)] = []
    var headComplete = false
    /// The forwarded multipart boundary, if the head declares one.
    var boundary: String?
    var contentLength: Int?
    var chunked = false
    /// The body bytes as sent (still chunked, if it was).
    var rawBody: [UInt8] = []
    /// The body with chunk framing removed, as far as the chunks are whole.
    var body: [UInt8] = []
    /// Whether the chunked body ended with its last chunk.
    var lastChunkArrived = false

    init(_ bytes: [UInt8]) {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return }
        headComplete = true
        for line in String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
            .dropFirst()
        {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields.append(
                (
                    String(line[..<colon]).lowercased(),
                    line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                ))
        }
        contentLength = fields.first { $0.name == "content-length" }.flatMap { Int($0.value) }
        chunked = fields.contains { $0.name == "transfer-encoding" && $0.value.lowercased() == "chunked" }
        if let type = fields.first(where: { $0.name == "content-type" })?.value,
            let range = type.range(of: "boundary=")
        {
            boundary = String(type[range.upperBound...].prefix { $0 != ";" && $0 != " " })
                .trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        rawBody = Array(bytes[end.upperBound...])
        if chunked { dechunk() } else { body = rawBody }
    }

    private mutating func dechunk() {
        var index = 0
        while let lineEnd = rawBody[index...].firstRange(of: Array("\r\n".utf8)) {
            let sizeText = String(decoding: rawBody[index..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.prefix { $0 != ";" }, radix: 16) else { return }
            let start = lineEnd.upperBound
            if size == 0 {
                lastChunkArrived = true
                return
            }
            guard start + size + 2 <= rawBody.count else {
                body += rawBody[start..<min(start + size, rawBody.count)]
                return
            }
            body += rawBody[start..<start + size]
            index = start + size + 2
        }
    }

    /// The close delimiter of the forwarded boundary, if there is one.
    var closeDelimiter: [UInt8]? { boundary.map { Array("--\($0)--".utf8) } }

    /// Whether the upstream could have read a whole request: the forwarded boundary's close
    /// delimiter arrived, or a Content-Length body reached its length, or (a body that is not
    /// multipart) its last chunk arrived.
    var isComplete: Bool {
        guard headComplete else { return false }
        if let closeDelimiter,
            body.firstRange(of: closeDelimiter) != nil || rawBody.firstRange(of: closeDelimiter) != nil
        {
            return true
        }
        if let contentLength, rawBody.count >= contentLength { return true }
        return boundary == nil && lastChunkArrived
    }
}
