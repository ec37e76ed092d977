import Foundation

/// One request as a recording upstream received it: the raw request line, the head fields and
/// the body with its framing removed.
struct RecordedRequest {
    var requestLine: String
    var fields: [(name: String, value: String)]
    var body: [UInt8]

    /// The values of every field called `name` (ignoring case).
    func values(_ name: String) -> [String] {
        fields.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    /// Parses `bytes` when they hold a whole request (Content-Length or chunked); `nil` while
    /// more is to come.
    init?(_ bytes: ArraySlice<UInt8>) {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return nil }
        let lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        requestLine = lines[0]
        fields = lines.dropFirst().map { line in
            let colon = line.firstIndex(of: ":") ?? line.endIndex
            return (String(line[..<colon]), line[colon...].dropFirst().trimmingCharacters(in: .whitespaces))
        }
        let rest = bytes[end.upperBound...]
        if let length = fields.first(where: { $0.name.lowercased() == "content-length" }).flatMap({
            Int($0.value)
        }) {
            guard rest.count >= length else { return nil }
            body = Array(rest.prefix(length))
        } else if fields.contains(where: { $0.name.lowercased() == "transfer-encoding" }) {
            var body: [UInt8] = []
            var position = rest.startIndex
            while true {
                guard let lineEnd = rest[position...].firstRange(of: Array("\r\n".utf8)) else { return nil }
                let sizeText = String(decoding: rest[position..<lineEnd.lowerBound], as: UTF8.self)
                guard let size = Int(sizeText.prefix { $0 != ";" }, radix: 16) else { return nil }
                let dataStart = lineEnd.upperBound
                if size == 0 { break }
                guard rest.endIndex - dataStart >= size + 2 else { return nil }
                body += rest[dataStart..<(dataStart + size)]
                position = dataStart + size + 2
            }
            self.body = body
        } else {
            body = []
        }
    }
}

extension FakeUpstream {
    /// The first whole request received after byte `offset`, waiting up to 20 s for it.
    func request(after offset: Int) throws -> RecordedRequest {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let bytes = bytesReceived
            if bytes.count > offset, let request = RecordedRequest(bytes[offset...]) { return request }
            Thread.sleep(forTimeInterval: 0.01)
        }
        throw TestFailure("no whole request upstream after byte \(offset): \(bytesReceived.count) bytes")
    }
}
