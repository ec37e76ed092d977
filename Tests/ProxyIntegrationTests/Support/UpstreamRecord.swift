import Foundation

/// One request as a recording upstream got it, cut out of its connection's bytes: whole (its
/// framing complete, parsed) or partial (what followed the last whole request on that
/// connection; aborted once the connection is closed).
struct UpstreamRecord {
    /// The request line, or as much of it as arrived.
    let requestLine: String
    /// The request, when it is whole.
    let request: RecordedRequest?
    /// Whether the connection it came on is closed.
    let connectionClosed: Bool

    /// The request's `X-Request-Id` (the proxy's access-log `id`), once its head arrived.
    let requestID: String?

    /// The method of the request line.
    var method: String { String(requestLine.prefix { $0 != " " }) }

    /// The target's `case` query parameter (`Resources/h2_hostile.py --tag`), if there is one.
    var caseName: String? {
        guard let range = requestLine.range(of: "case=") else { return nil }
        return String(requestLine[range.upperBound...].prefix { $0 != "&" && $0 != " " })
    }

    /// The `X-Request-Id` value of a head among `bytes`, if it arrived whole.
    static func requestID(in bytes: ArraySlice<UInt8>) -> String? {
        // A head is within its first 64 KiB (a large body is not decoded as text).
        let text = String(decoding: bytes.prefix(65536), as: UTF8.self)
        guard let head = text.range(of: "\r\n\r\n"),
            let field = text[..<head.lowerBound].range(of: "\r\nX-Request-Id: ")
        else { return nil }
        return String(text[field.upperBound...].prefix { $0 != "\r\n" })
    }

    /// Every request `recorder` holds, connection by connection in accept order.
    static func all(_ recorder: FakeUpstream) -> [UpstreamRecord] {
        recorder.connectionRecords.flatMap { connection in
            var records: [UpstreamRecord] = []
            var rest = connection.bytes[...]
            while !rest.isEmpty {
                let length = FakeUpstream.wholeRequestLength(Array(rest))
                let piece = rest.prefix(length ?? rest.count)
                records.append(
                    UpstreamRecord(
                        requestLine: String(decoding: piece.prefix { $0 != 0x0D }, as: UTF8.self),
                        request: length == nil ? nil : RecordedRequest(piece),
                        connectionClosed: connection.closed, requestID: requestID(in: piece)))
                rest = rest.dropFirst(piece.count)
            }
            return records
        }
    }
}
