import HTTP1
import ProxyCore

/// Requests and responses the tests send, as wire text.
enum Wire {
    static let get = "GET /a HTTP/1.1\r\nHost: t\r\n\r\n"
    static let getClose = "GET /a HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
    static func post(_ body: String) -> String {
        "POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
    }
    static func postHead(length: Int) -> String {
        "POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: \(length)\r\n\r\n"
    }
    static let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    static let chunkedOK = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
    static let closeDelimited = "HTTP/1.1 200 OK\r\n\r\nall of it"
}

extension Harness {
    /// Sends `request`, connects the upstream, lets it read, and answers with `response`.
    func serve(_ request: String = Wire.get, response: String = Wire.ok) {
        clientSends(request)
        if shell.upstream == .connecting { upstreamConnects() }
        upstreamDrains()
        upstreamSends(response)
        clientDrains()
    }

    /// The statuses of the log records, in order.
    var statuses: [Int] { shell.records.map(\.status) }
}

extension String {
    /// How many times `needle` occurs (without overlaps).
    func occurrences(of needle: String) -> Int {
        let haystack = Array(utf8)
        let pattern = Array(needle.utf8)
        var count = 0
        var index = 0
        while index + pattern.count <= haystack.count {
            if haystack[index..<index + pattern.count].elementsEqual(pattern) {
                count += 1
                index += pattern.count
            } else {
                index += 1
            }
        }
        return count
    }
}

/// The payload of a chunked body (`nil` when it is not a complete chunked body).
func dechunked(_ body: some StringProtocol) -> String? {
    dechunked(Array(body.utf8)).map { String(decoding: $0, as: UTF8.self) }
}

/// The payload bytes of a chunked body (`nil` when it is not a complete chunked body).
func dechunked(_ bytes: [UInt8]) -> [UInt8]? {
    var decoder = BodyDecoder(.chunked)
    var out: [UInt8] = []
    let used = try? bytes.withUnsafeBytes { buffer in
        try decoder.decode(buffer) { out.append(contentsOf: $0) }
    }
    guard used == bytes.count, decoder.isComplete else { return nil }
    return out
}

/// The bytes after a message head.
func messageBody(_ bytes: [UInt8]) -> [UInt8] {
    var index = 0
    while index + 4 <= bytes.count, !bytes[index..<index + 4].elementsEqual([13, 10, 13, 10]) { index += 1 }
    return Array(bytes[min(index + 4, bytes.count)...])
}

/// The body of a response text (after the blank line).
func responseBody(_ text: String) -> String {
    let bytes = Array(text.utf8)
    var index = 0
    while index + 4 <= bytes.count, !bytes[index..<index + 4].elementsEqual([13, 10, 13, 10]) { index += 1 }
    return String(decoding: bytes[min(index + 4, bytes.count)...], as: UTF8.self)
}
