import Foundation
import Testing

/// A real S3 implementation no one here wrote as the upstream: moto's server. A client that
/// sends no credentials uploads through an `s3_post` route; the object read back with boto3
/// has the key FormGate granted, the very bytes sent, and the sniffed type as its
/// Content-Type. (moto checks neither signature nor policy: `S3PostRoundTripMockTests` does.)
@Suite(.serialized) struct S3PostRoundTripTests {
    /// `stream` needs FormGate to send an exact Content-Length on a provider route even when
    /// the body is not read whole before the head goes upstream; moto answers a chunked POST
    /// with 411.
    @Test(arguments: [("buffer", 1 << 20), ("buffer", 256 << 20), ("stream", 1 << 20), ("stream", 256 << 20)])
    func aClientWithoutCredentialsStoresItsFileInMoto(mode: String, size: Int) throws {
        let moto = try startMoto(bucket: "photos")
        defer { moto.server.stop() }
        let proxy = try startProxy(
            """
            upstream: \(moto.url)
            routes:
              - match: { path: /photos }
                request_body: \(mode)
                multipart:
                  sniff: { bytes: 4096, content_type: override }
                  inject:
                    - before: file
                      s3_post: { access_key: testing, secret_key: moto-does-not-check, region: us-east-1, bucket: photos, key: "uploads/{uuid}{ext}", ttl: 15m }

            """, workers: 1)
        defer { proxy.stop() }
        let file = try writePNGFile(size: size)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        // curl declares text/plain; the bytes are a PNG, which FormGate sniffs and names.
        let (_, output) = try run(
            try tool("curl"),
            [
                "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-F",
                "file=@\(file.path);filename=IMG.JPG;type=text/plain",
                proxy.url + "/photos",
            ])
        let status = String(decoding: output, as: UTF8.self)
        let line = try #require(proxy.accessLog(atLeast: 1).first)
        #expect(status == "204", "moto's answer, relayed (\(line["error"] ?? "no error"))")
        #expect(line["providers"] as? [String] == ["s3_post"])
        let key = try #require(line["object_key"] as? String, "\(line)")
        #expect(key.hasPrefix("uploads/") && key.hasSuffix(".png"), "\(key)")
        #expect(key.count == "uploads/".count + 36 + ".png".count, "\(key)")
        guard status == "204" else { return }
        let stored = try botoGet(moto.url, bucket: "photos", key: key)
        #expect(stored == StoredObject(size: size, sha256: file.sha256, contentType: "image/png"))
    }

    /// A client's own `key`, `policy` and signature never reach moto: the object is stored
    /// under the key FormGate granted, and nothing under the client's.
    @Test func theClientsKeyAndPolicyAreDropped() throws {
        let moto = try startMoto(bucket: "photos")
        defer { moto.server.stop() }
        let proxy = try startProxy(
            """
            upstream: \(moto.url)
            routes:
              - match: { path: /photos }
                request_body: buffer
                multipart:
                  inject:
                    - { before: file, s3_post: { access_key: testing, secret_key: testing, region: us-east-1, bucket: photos, key: "granted/{uuid}{ext}" } }

            """, workers: 1)
        defer { proxy.stop() }
        let file = try writePNGFile(size: 10_000)
        defer { try? FileManager.default.removeItem(atPath: file.path) }
        let (_, output) = try run(
            try tool("curl"),
            [
                "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-F", "key=chosen/by-client.png", "-F",
                "policy=forged", "-F", "x-amz-signature=forged", "-F", "file=@\(file.path);filename=a.png",
                proxy.url + "/photos",
            ])
        #expect(String(decoding: output, as: UTF8.self) == "204")
        let key = try #require(proxy.accessLog(atLeast: 1).first?["object_key"] as? String)
        #expect(key.hasPrefix("granted/"))
        #expect(try botoGet(moto.url, bucket: "photos", key: key).sha256 == file.sha256)
        #expect(throws: (any Error).self, "nothing under the client's key") {
            try botoGet(moto.url, bucket: "photos", key: "chosen/by-client.png")
        }
    }
}
