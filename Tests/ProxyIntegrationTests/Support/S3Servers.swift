import Foundation

/// moto's S3 server (`make sdk-venv`) on a free port with `bucket` created by boto3, once it
/// answers, and its URL. moto prints werkzeug's banner rather than `listening on`, so the port
/// is chosen first and the server is polled until it accepts.
func startMoto(bucket: String) throws -> (server: ServerProcess, url: String) {
    let python = try sdkPython()
    let motoServer = URL(fileURLWithPath: python).deletingLastPathComponent().appendingPathComponent(
        "moto_server"
    ).path
    guard FileManager.default.isExecutableFile(atPath: motoServer) else {
        throw TestFailure("\(motoServer) is missing (make sdk-venv installs moto[server])")
    }
    let probe = try FakeUpstream(.silent)
    let port = probe.port
    probe.stop()
    let server = try ServerProcess(motoServer, ["-H", "127.0.0.1", "-p", "\(port)"], waitForListening: false)
    guard eventually(within: 60, { (try? RawClient(port: port)) != nil }) else {
        throw TestFailure("moto_server did not start: \(server.stderr)")
    }
    let url = "http://127.0.0.1:\(port)"
    try s3Client(url, ["create-bucket", bucket])
    return (server, url)
}

/// `s3_post_mock.py`: the verifying S3 POST endpoint for one bucket and key pair.
func startS3PostMock(
    accessKey: String = "AKIDMOCK", secretKey: String = "mock-secret", region: String = "eu-central-1",
    bucket: String = "photos", clockOffset: Int = 0, sessionToken: String? = nil
) throws -> ServerProcess {
    try ServerProcess(
        try python3(),
        [
            UpstreamServerTests.resources.appendingPathComponent("s3_post_mock.py").path, "--access-key",
            accessKey, "--secret-key", secretKey, "--region", region, "--bucket", bucket, "--clock-offset",
            "\(clockOffset)",
        ] + (sessionToken.map { ["--session-token", $0] } ?? []))
}

/// Runs `s3_client.py ENDPOINT ARGUMENTS…` (boto3) and parses the JSON it prints.
@discardableResult
func s3Client(_ endpoint: String, _ arguments: [String]) throws -> [String: Any] {
    let script = UpstreamServerTests.resources.appendingPathComponent("s3_client.py").path
    let (status, output) = try run(try sdkPython(), [script, endpoint] + arguments)
    guard status == 0 else {
        throw TestFailure(
            "s3_client.py \(arguments) exited \(status): \(String(decoding: output, as: UTF8.self))")
    }
    return try jsonObject(output)
}

/// The object as boto3's `get_object` reads it back.
struct StoredObject: Equatable {
    var size: Int
    var sha256: String
    var contentType: String
}

/// Reads `key` back from `bucket` with boto3.
func botoGet(_ endpoint: String, bucket: String, key: String) throws -> StoredObject {
    let answer = try s3Client(endpoint, ["get", bucket, key])
    return StoredObject(
        size: answer["size"] as? Int ?? -1, sha256: answer["sha256"] as? String ?? "",
        contentType: answer["content_type"] as? String ?? "")
}

/// What `s3_post_mock.py` recorded of every POST it received (`GET /_mock/posts`).
func mockPosts(_ mock: ServerProcess) throws -> [[String: Any]] {
    let (_, output) = try run(try tool("curl"), ["-sS", mock.url + "/_mock/posts"])
    guard let posts = try JSONSerialization.jsonObject(with: output) as? [[String: Any]] else {
        throw TestFailure("not a list of posts: \(String(decoding: output, as: UTF8.self))")
    }
    return posts
}

/// A file of `size` bytes that sniffs as PNG (its signature, then bytes that differ per 1 MiB
/// block), written to a temporary path; returns the path and its sha256.
func writePNGFile(size: Int) throws -> (path: String, sha256: String) {
    let path = NSTemporaryDirectory() + "formgate-s3-\(UUID().uuidString).bin"
    guard FileManager.default.createFile(atPath: path, contents: nil),
        let handle = FileHandle(forWritingAtPath: path)
    else { throw TestFailure("cannot create \(path)") }
    defer { try? handle.close() }
    var block = [UInt8](repeating: 0, count: 1 << 20)
    var state: UInt32 = 0x1234_5678
    for index in block.indices {
        state = state &* 1_664_525 &+ 1_013_904_223
        block[index] = UInt8(truncatingIfNeeded: state >> 24)
    }
    let signature: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 0x0D, 0x49, 0x48, 0x44, 0x52,
    ]
    let digest = Digest()
    var written = 0
    var blockNumber: UInt32 = 0
    while written < size {
        var chunk = Array(block.prefix(size - written))
        if written == 0 {
            chunk.replaceSubrange(0..<min(signature.count, chunk.count), with: signature.prefix(chunk.count))
        } else {
            withUnsafeBytes(of: blockNumber.littleEndian) {
                chunk.replaceSubrange(0..<min(4, chunk.count), with: $0.prefix(chunk.count))
            }
        }
        try handle.write(contentsOf: chunk)
        digest.update(chunk)
        written += chunk.count
        blockNumber += 1
    }
    return (path, digest.hex())
}

/// Decodes the base64 JSON of a `policy` field.
func decodedPolicy(_ base64: String) throws -> [String: Any] {
    guard let data = Data(base64Encoded: base64) else { throw TestFailure("policy is not base64: \(base64)") }
    return try jsonObject(data)
}
