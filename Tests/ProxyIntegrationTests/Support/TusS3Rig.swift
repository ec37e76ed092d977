import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Two FormGates (replicas) with one tus route on the same s3 store (moto's S3 server) and the
/// same Redis (the upload locks), delivering to one Werkzeug upstream.
final class TusS3Rig: @unchecked Sendable {
    let moto: ServerProcess
    let motoURL: String
    let redis: RedisServer
    let upstream: ServerProcess
    let replicas: [ServerProcess]
    let bucket = "tus-replicas"

    /// `lockTTL` short, so a replica killed mid-PATCH keeps the upload only briefly.
    init(expireAfter: String = "1h", lockTTL: String = "2s", partSize: String = "16MiB") throws {
        (moto, motoURL) = try startMoto(bucket: bucket)
        redis = try RedisServer()
        upstream = try startWerkzeug()
        let yaml = """
            redis: { url: \(redis.url), key_prefix: "fg-test:" }
            routes:
              - name: resumable
                match: { path: /files }
                upstream: http://127.0.0.1:\(upstream.port)
                request_body: stream
                tus:
                  store:
                    s3:
                      endpoint: \(motoURL)
                      bucket: \(bucket)
                      region: us-east-1
                      prefix: uploads/
                      access_key: testing
                      secret_key: testing
                      part_size: \(partSize)
                      lock_ttl: \(lockTTL)
                  max_size: 1GiB
                  expire_after: \(expireAfter)
                  deliver: { path: /upload, file_field: file, fields: [title] }
                multipart: { filename: "{uuid}{ext}" }

            """
        replicas = [try startProxy(yaml), try startProxy(yaml)]
    }

    func stop() {
        for replica in replicas { replica.stop() }
        upstream.stop()
        redis.stop()
        moto.stop()
    }

    /// The bucket's objects and the multipart uploads in progress (boto3, every page).
    func listing() throws -> (objects: [String], uploads: [String]) {
        let answer = try s3Client(motoURL, ["list", bucket])
        return (answer["objects"] as? [String] ?? ["?"], answer["uploads"] as? [String] ?? ["?"])
    }

    /// Whether a lock of the upload `id` is held in Redis now.
    func locked(_ id: String) -> Bool {
        (try? redis.command(["EXISTS", "fg-test:tus-lock:\(id)"])) == ":1"
    }

    /// The POSTs Werkzeug logged (its log line follows its answer: poll for it).
    var postsSeen: Int {
        upstream.stderr.split(separator: "\n").filter { $0.contains("\"POST ") }.count
    }

    /// PATCHes `bytes` at `offset` on `port`, again while the upload is locked (423) by a
    /// replica that died holding it, for up to `seconds`.
    func patch(port: Int, _ path: String, offset: Int, _ bytes: [UInt8], seconds: Double = 30) throws
        -> (TusResponse, locked: Int)
    {
        let deadline = Date().addingTimeInterval(seconds)
        var locked = 0
        while true {
            let response = try TusHTTP.patch(port: port, path, offset: offset, bytes)
            guard response.status == 423, Date() < deadline else { return (response, locked) }
            locked += 1
            usleep(200_000)
        }
    }
}
