import HTTP1
import HTTPCore
import MultipartParsing

/// What the demo upstream saw of one request: headers, and either each multipart part or
/// the raw body's size and digest.
final class Receipt: MultipartEventHandler {
    struct Part {
        var head: PartHead
        var size: Int64 = 0
        var digest: SHA256Digest?
        var value: [UInt8] = []
    }

    let head: RequestHead
    let hashing: Bool
    var parser: MultipartParser?
    var parts: [Part] = []
    var error: String?
    var bodySize: Int64 = 0
    var bodyDigest: SHA256Digest?
    var ended = false

    init(head: RequestHead, hashing: Bool) {
        self.head = head
        self.hashing = hashing
        if let value = head.headers.first("Content-Type"), let type = try? MediaType.parse(value),
            type.isMultipartFormData
        {
            do throws(MultipartError) {
                let boundary = (try? type.multipartBoundary()) ?? []
                parser = try MultipartParser(
                    boundary: boundary,
                    limits: MultipartLimits(parts: 100_000, fieldBytes: 1 << 40, fileBytes: 1 << 50))
            } catch {
                self.error = "\(error)"
            }
        }
        if hashing { bodyDigest = SHA256Digest() }
    }

    func consume(_ bytes: UnsafeRawBufferPointer) {
        bodySize += Int64(bytes.count)
        bodyDigest?.update(bytes)
        guard error == nil, parser != nil else { return }
        var handler = self
        do throws(MultipartError) {
            try parser!.feed(bytes, into: &handler)
        } catch {
            self.error = "\(error)"
        }
    }

    func handle(_ event: MultipartEvent) {
        switch event {
        case .partBegin(let head):
            parts.append(Part(head: head, digest: hashing ? SHA256Digest() : nil))
        case .body(let bytes):
            parts[parts.count - 1].size += Int64(bytes.count)
            parts[parts.count - 1].digest?.update(bytes)
            if !parts[parts.count - 1].head.isFile, parts[parts.count - 1].value.count < 65536 {
                parts[parts.count - 1].value.append(
                    contentsOf: bytes.prefix(65536 - parts[parts.count - 1].value.count))
            }
        case .partEnd:
            break
        case .end:
            ended = true
        }
    }

    func json(connectionRequests: Int) -> String {
        if parser != nil, error == nil {
            var collector = self
            do throws(MultipartError) {
                try parser!.finish(into: &collector)
            } catch {
                self.error = "\(error)"
            }
        }
        var members: [(String, String)] = [
            ("method", JSON.string(head.method)),
            ("path", JSON.string(head.target)),
            (
                "headers",
                JSON.array(head.headers.map { JSON.array([JSON.bytes($0.name), JSON.bytes($0.value)]) })
            ),
            ("body_size", "\(bodySize)"),
            ("connection_requests", "\(connectionRequests)"),
        ]
        if let bodyDigest { members.append(("body_sha256", JSON.string(bodyDigest.finalizeHex()))) }
        if let parser {
            let fields = parts.filter { !$0.head.isFile }.map { part in
                JSON.object([
                    ("name", JSON.bytes(part.head.name)), ("value", JSON.bytes(part.value)),
                    ("size", "\(part.size)"),
                ])
            }
            let files = parts.filter(\.head.isFile).map { part in
                var file: [(String, String)] = [
                    ("name", JSON.bytes(part.head.name)), ("filename", JSON.bytes(part.head.filename ?? [])),
                    ("content_type", part.head.headers.first("Content-Type").map(JSON.bytes) ?? "null"),
                    ("size", "\(part.size)"),
                ]
                if let digest = part.digest { file.append(("sha256", JSON.string(digest.finalizeHex()))) }
                return JSON.object(file)
            }
            members.append(("boundary", JSON.string(String(decoding: parser.boundary, as: UTF8.self))))
            members.append(("parts", JSON.array(parts.map { JSON.bytes($0.head.name) })))
            members.append(("fields", JSON.array(fields)))
            members.append(("files", JSON.array(files)))
            members.append(("anomalies", JSON.array(parser.anomalies.names.map(JSON.string))))
        }
        if let error { members.append(("error", JSON.string(error))) }
        return JSON.object(members)
    }
}
