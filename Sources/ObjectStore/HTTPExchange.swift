#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP/1.1 response as the S3 client reads it: the status, the header fields and the whole
/// body (bounded by the caller).
struct HTTPResponse {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
    /// Whether the connection may carry another request.
    var reusable: Bool

    /// The first field named `name` (case-insensitive).
    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// One keep-alive HTTP/1.1 connection over a `BlockingSocket`: writes a request, reads its
/// response (`Content-Length`, chunked, or to the end of the stream), every read bounded.
final class HTTPExchange: @unchecked Sendable {
    let socket: BlockingSocket
    /// Bytes received past the last response.
    private var pending: [UInt8] = []
    /// Whether a response was ever read on the connection (a failure on a fresh one is not
    /// retried).
    private(set) var used = false

    /// The largest response head read.
    static let maxHead = 64 * 1024

    init(socket: BlockingSocket) {
        self.socket = socket
    }

    /// Sends `head` then `body`, and reads the response (no body for `HEAD`), at most
    /// `maxBody` bytes of body.
    func exchange(
        head: [UInt8], body: [UInt8], isHead: Bool, maxBody: Int
    ) throws(BlockingSocket.Failure) -> HTTPResponse {
        if body.count <= 64 * 1024 {
            try socket.send(head + body)
        } else {
            try socket.send(head)
            try socket.send(body)
        }
        var response = try readHead()
        used = true
        if isHead || response.status == 204 || response.status == 304 || (100..<200).contains(response.status)
        {
            return response
        }
        if let encoding = response.header("Transfer-Encoding"), encoding.lowercased().contains("chunked") {
            response.body = try readChunked(maxBody: maxBody)
        } else if let text = response.header("Content-Length") {
            guard let length = Int(text.trimmingCharacters), length >= 0 else {
                throw .init(call: "HTTP response: bad Content-Length", code: 0)
            }
            guard length <= maxBody else {
                throw .init(call: "HTTP response: body over \(maxBody) bytes", code: 0)
            }
            response.body = try readExactly(length)
        } else {
            response.body = try readToEnd(maxBody: maxBody)
            response.reusable = false
        }
        return response
    }

    private func fill() throws(BlockingSocket.Failure) -> Bool {
        let chunk = try socket.receive(upTo: 64 * 1024)
        pending.append(contentsOf: chunk)
        return !chunk.isEmpty
    }

    private func readHead() throws(BlockingSocket.Failure) -> HTTPResponse {
        var searched = 0
        while true {
            if let end = Self.headEnd(pending, from: max(0, searched - 3)) {
                let head = Array(pending[..<end])
                pending.removeFirst(end + 4)
                return try Self.parseHead(head)
            }
            searched = pending.count
            guard pending.count <= Self.maxHead else {
                throw .init(call: "HTTP response: head over 64 KiB", code: 0)
            }
            guard try fill() else { throw .init(call: "HTTP response: connection closed", code: ECONNRESET) }
        }
    }

    private static func headEnd(_ bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = start
        while index + 3 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                return index
            }
            index += 1
        }
        return nil
    }

    private static func parseHead(_ head: [UInt8]) throws(BlockingSocket.Failure) -> HTTPResponse {
        let lines = head.split(separator: 10, omittingEmptySubsequences: false).map {
            String(decoding: $0.last == 13 ? $0.dropLast() : $0, as: UTF8.self)
        }
        let status = lines.first?.split(separator: " ")
        guard let status, status.count >= 2, status[0].hasPrefix("HTTP/1."), let code = Int(status[1]),
            (100...599).contains(code)
        else { throw .init(call: "HTTP response: bad status line", code: 0) }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append(
                (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters))
        }
        var response = HTTPResponse(status: code, headers: headers, body: [], reusable: true)
        if response.header("Connection")?.lowercased() == "close" || status[0] == "HTTP/1.0" {
            response.reusable = false
        }
        return response
    }

    private func readExactly(_ count: Int) throws(BlockingSocket.Failure) -> [UInt8] {
        while pending.count < count {
            guard try fill() else { throw .init(call: "HTTP response: body cut short", code: ECONNRESET) }
        }
        let body = Array(pending[..<count])
        pending.removeFirst(count)
        return body
    }

    private func readLine() throws(BlockingSocket.Failure) -> String {
        while true {
            if let newline = pending.firstIndex(of: 10) {
                let line = pending[..<newline]
                pending.removeFirst(newline + 1)
                return String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
            }
            guard pending.count <= 4096 else {
                throw .init(call: "HTTP response: chunk line too long", code: 0)
            }
            guard try fill() else { throw .init(call: "HTTP response: body cut short", code: ECONNRESET) }
        }
    }

    private func readChunked(maxBody: Int) throws(BlockingSocket.Failure) -> [UInt8] {
        var body: [UInt8] = []
        while true {
            let line = try readLine()
            let sizeText = line.prefix { $0 != ";" }.trimmingCharacters
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                throw .init(call: "HTTP response: bad chunk size", code: 0)
            }
            if size == 0 {
                while try !readLine().isEmpty {}
                return body
            }
            guard body.count + size <= maxBody else {
                throw .init(call: "HTTP response: body over \(maxBody) bytes", code: 0)
            }
            body += try readExactly(size)
            guard try readLine().isEmpty else { throw .init(call: "HTTP response: bad chunk end", code: 0) }
        }
    }

    private func readToEnd(maxBody: Int) throws(BlockingSocket.Failure) -> [UInt8] {
        while try fill() {
            guard pending.count <= maxBody else {
                throw .init(call: "HTTP response: body over \(maxBody) bytes", code: 0)
            }
        }
        defer { pending = [] }
        return pending
    }
}

extension StringProtocol {
    /// The text without its outer spaces and tabs.
    var trimmingCharacters: String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
