import Foundation

/// A verifying object-store mock from `Resources/` (`oss_post_mock.py`, `cos_post_mock.py`) on a
/// free port, with what a test reads back from it: the stored keys and each object's bytes
/// and Content-Type.
final class PostObjectMock {
    /// An object as `GET /KEY` returned it.
    struct StoredObject {
        var status: Int
        var contentType: String
        var size: Int
        var sha256: String
    }

    let server: ServerProcess

    /// Starts `script` with the common mock command line.
    init(
        script: String, accessKey: String, secretKey: String, bucket: String, region: String? = nil,
        clockOffset: Int = 0, securityToken: String? = nil
    ) throws {
        var arguments = [
            UpstreamServerTests.resources.appendingPathComponent(script).path, "--access-key", accessKey,
            "--secret-key", secretKey, "--bucket", bucket, "--clock-offset=\(clockOffset)",
        ]
        if let region { arguments += ["--region", region] }
        if let securityToken { arguments += ["--security-token", securityToken] }
        server = try ServerProcess(try python3(), arguments)
    }

    var url: String { server.url }

    func stop() { server.stop() }

    /// `GET /KEY`: the status, the Content-Type and the body's size and SHA-256.
    func object(_ key: String) throws -> StoredObject {
        let body = NSTemporaryDirectory() + "formgate-object-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: body) }
        let path = key.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? key
        let (_, output) = try run(
            try tool("curl"), ["-sS", "-o", body, "-w", "%{http_code} %{content_type}", "\(url)/\(path)"])
        let answer = String(decoding: output, as: UTF8.self).split(separator: " ", maxSplits: 1)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: body)))
        return StoredObject(
            status: Int(answer.first ?? "") ?? 0, contentType: answer.count > 1 ? String(answer[1]) : "",
            size: bytes.count, sha256: Digest.hex(bytes))
    }

    /// `GET /`: every key stored so far, sorted.
    func keys() throws -> [String] {
        let (_, output) = try run(try tool("curl"), ["-sS", url + "/"])
        return String(decoding: output, as: UTF8.self).components(separatedBy: "<Key>").dropFirst().map {
            String($0.prefix { $0 != "<" })
        }
    }
}

/// What curl got back from a form POST: the status and the body (a store's XML error).
struct FormPostAnswer {
    var status: Int
    var body: String

    /// The `<Code>` of a store's XML error, or "" when there is none.
    var errorCode: String {
        body.components(separatedBy: "<Code>").dropFirst().first.map { String($0.prefix { $0 != "<" }) } ?? ""
    }
}

/// POSTs a form with curl: `fields` as literal strings (`--form-string`, so `;` in a value is
/// kept), then the file part named `file` (with `filename` and the declared `type`), then
/// `curlArguments` (a header, or a field after the file).
func postForm(
    _ url: String, fields: [(String, String)], file: String, filename: String,
    type: String = "application/octet-stream", curlArguments: [String] = []
) throws -> FormPostAnswer {
    let arguments =
        ["-sS", "-w", "\n%{http_code}"] + fields.flatMap { ["--form-string", "\($0.0)=\($0.1)"] } + [
            "-F", "file=@\(file);filename=\(filename);type=\(type)",
        ] + curlArguments + [url]
    let text = String(decoding: try run(try tool("curl"), arguments).output, as: UTF8.self)
    let status = text.split(separator: "\n").last.flatMap { Int($0) } ?? 0
    return FormPostAnswer(status: status, body: String(text.dropLast(String(status).count)))
}

/// The form fields (name and value, in order) before the first file part of a multipart
/// request as an upstream received it: what FormGate injected, to replay them.
func formFieldsBeforeTheFile(_ request: [UInt8]) -> [(String, String)] {
    let text = String(decoding: request, as: UTF8.self)
    var fields: [(String, String)] = []
    for part in text.components(separatedBy: "Content-Disposition: form-data; name=\"").dropFirst() {
        let head = part.prefix { $0 != "\r" }
        if head.contains("; filename=") { break }
        guard
            let value = part.components(separatedBy: "\r\n\r\n").dropFirst().first?.components(
                separatedBy: "\r\n--"
            ).first
        else { continue }
        fields.append((String(head.prefix { $0 != "\"" }), value))
    }
    return fields
}

/// A file on disk that sniffs as PNG (signature and IHDR chunk) followed by `bytes` of a
/// non-repeating pattern in all; returns its path and SHA-256. The caller removes it.
func pngFile(bytes: Int) throws -> (path: String, sha256: String) {
    let header: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
    var content = header + [UInt8](repeating: 0, count: bytes - header.count)
    var state: UInt32 = 0x9E37_79B9
    for index in header.count..<content.count {
        state = state &* 1_664_525 &+ 1_013_904_223
        content[index] = UInt8(truncatingIfNeeded: state >> 24)
    }
    let path = NSTemporaryDirectory() + "formgate-post-object-\(UUID().uuidString).bin"
    try Data(content).write(to: URL(fileURLWithPath: path))
    return (path, Digest.hex(content))
}
