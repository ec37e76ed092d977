import HTTPCore
import Resumable
import Synchronization
import UploadRules

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking S3 client for the few calls the tus store makes (objects, multipart uploads,
/// listings), path-style (`endpoint/bucket/key`), signed with SigV4 (the payload's real
/// SHA-256 always: parts are in memory anyway). Keep-alive connections are pooled; a request
/// that fails on a reused connection is sent once more on a fresh one.
///
/// Errors never carry a signature, a secret or a session token: the S3 error code and the
/// HTTP status, or the failed call and `errno`.
final class S3Client: Sendable {
    /// Where the bucket is (its credentials are `signing`'s: they may be rotated).
    let settings: ObjectStoreSettings
    /// The signer and session token requests are sent with now.
    private let signing: Mutex<(signer: SigV4Signer, sessionToken: String?)>
    private let pool = Mutex<[HTTPExchange]>([])
    /// Each connection, send and receive: milliseconds.
    static let timeoutMilliseconds: Int64 = 30_000
    static let maxPooled = 8

    init(settings: ObjectStoreSettings) {
        self.settings = settings
        signing = Mutex(
            (
                SigV4Signer(
                    region: settings.region, accessKey: settings.accessKey, secretKey: settings.secretKey),
                settings.sessionToken
            ))
    }

    /// Signs the next requests with the credentials of `rotated` (a reload that read a rotated
    /// secret file); its endpoint, bucket and region are this client's.
    func rotate(to rotated: ObjectStoreSettings) {
        let signer = SigV4Signer(
            region: settings.region, accessKey: rotated.accessKey, secretKey: rotated.secretKey)
        signing.withLock { $0 = (signer, rotated.sessionToken) }
    }

    /// The request's path: `/bucket/key`, SigV4-encoded (the key's slashes kept).
    func path(_ key: String) -> String {
        "/" + SigV4Signer.uriEncode(settings.bucket, keepSlash: false) + "/"
            + SigV4Signer.uriEncode(key, keepSlash: true)
    }

    /// Sends one signed request and reads its answer (at most `maxBody` bytes of body). A
    /// status of 300 or more is thrown as a `StoreError` unless `accepting` it.
    func send(
        _ method: String, key: String?, query: [(String, String)] = [],
        headers extra: [(String, String)] = [],
        body: [UInt8] = [], maxBody: Int = 1 << 20,
        accepting: Set<Int> = []
    ) throws(StoreError) -> HTTPResponse {
        let target = key.map(path) ?? "/" + SigV4Signer.uriEncode(settings.bucket, keepSlash: false)
        let payloadHash = body.isEmpty ? SigV4Signer.emptyPayloadHash : Hex.encode(SHA256.digest(body))
        let amzDate = PostPolicyTime.dateTime(Self.unixSeconds())
        var headers: [(String, String)] = [
            ("host", settings.hostHeader), ("x-amz-date", amzDate), ("x-amz-content-sha256", payloadHash),
        ]
        let (signer, sessionToken) = signing.withLock { $0 }
        if let token = sessionToken { headers.append(("x-amz-security-token", token)) }
        headers += extra
        let authorization = signer.authorization(
            method: method, path: target, query: query, headers: headers, payloadHash: payloadHash,
            amzDate: amzDate)
        let queryText = query.map {
            SigV4Signer.uriEncode($0.0, keepSlash: false) + "="
                + SigV4Signer.uriEncode($0.1, keepSlash: false)
        }.joined(separator: "&")
        var head = "\(method) \(target)\(queryText.isEmpty ? "" : "?" + queryText) HTTP/1.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "authorization: \(authorization)\r\n"
        if method == "PUT" || method == "POST" || !body.isEmpty {
            head += "content-length: \(body.count)\r\n"
        }
        head += "\r\n"
        let response = try exchange(Array(head.utf8), body: body, isHead: method == "HEAD", maxBody: maxBody)
        guard response.status < 300 || accepting.contains(response.status) else {
            let code = XMLScan(response.body).first("Code") ?? "HTTP \(response.status)"
            throw .io("S3 \(method) \(Self.operation(query)): \(code) (\(response.status))", 0)
        }
        return response
    }

    /// The S3 error code of a refusal thrown by `send` (`NoSuchUpload`), or nil.
    static func code(of error: StoreError) -> String? {
        guard case .io(let text, 0) = error, text.hasPrefix("S3 ") else { return nil }
        let words = text.split(separator: " ")
        guard let colon = words.firstIndex(where: { $0.hasSuffix(":") }), colon + 1 < words.count else {
            return nil
        }
        return String(words[colon + 1])
    }

    private static func operation(_ query: [(String, String)]) -> String {
        query.map(\.0).filter { $0 != "partNumber" && $0 != "continuation-token" }.joined(separator: ",")
    }

    private func exchange(
        _ head: [UInt8], body: [UInt8], isHead: Bool, maxBody: Int
    ) throws(StoreError) -> HTTPResponse {
        var attempt = 0
        while true {
            attempt += 1
            let pooled = pool.withLock { $0.popLast() }
            let connection: HTTPExchange
            if let pooled {
                connection = pooled
            } else {
                do throws(BlockingSocket.Failure) {
                    connection = HTTPExchange(
                        socket: try BlockingSocket.connect(
                            host: settings.host, port: settings.port,
                            timeoutMilliseconds: Self.timeoutMilliseconds,
                            tls: settings.scheme == "https"))
                } catch {
                    throw .io("S3 \(error.call)", error.code)
                }
            }
            do throws(BlockingSocket.Failure) {
                let response = try connection.exchange(
                    head: head, body: body, isHead: isHead, maxBody: maxBody)
                if response.reusable {
                    pool.withLock { if $0.count < Self.maxPooled { $0.append(connection) } }
                }
                return response
            } catch {
                connection.socket.close()
                // A kept-alive connection the server closed meanwhile: once more, on a new one.
                if pooled != nil, attempt == 1 { continue }
                throw .io("S3 \(error.call)", error.code)
            }
        }
    }

    static func unixSeconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }
}

extension S3Client {
    /// PutObject.
    func put(_ key: String, _ bytes: [UInt8]) throws(StoreError) {
        _ = try send("PUT", key: key, body: bytes)
    }

    /// GetObject, whole (at most `maxBytes`) or the range `range`; nil when there is no such key.
    func get(_ key: String, range: ClosedRange<Int64>? = nil, maxBytes: Int = 1 << 24) throws(StoreError)
        -> [UInt8]?
    {
        let headers = range.map { [("range", "bytes=\($0.lowerBound)-\($0.upperBound)")] } ?? []
        let response = try send("GET", key: key, headers: headers, maxBody: maxBytes, accepting: [404, 416])
        if response.status == 416 { return [] }
        return response.status == 404 ? nil : response.body
    }

    /// HeadObject: the object's size, or nil when there is none.
    func size(_ key: String) throws(StoreError) -> Int64? {
        let response = try send("HEAD", key: key, accepting: [404])
        guard response.status != 404 else { return nil }
        return response.header("Content-Length").flatMap { Int64($0) }
    }

    /// DeleteObject (none is no error).
    func delete(_ key: String) throws(StoreError) {
        _ = try send("DELETE", key: key, accepting: [404])
    }

    /// CreateMultipartUpload: its UploadId.
    func createMultipart(_ key: String) throws(StoreError) -> String {
        let response = try send("POST", key: key, query: [("uploads", "")])
        guard let id = XMLScan(response.body).first("UploadId"), !id.isEmpty else {
            throw .io("S3 CreateMultipartUpload: no UploadId", 0)
        }
        return id
    }

    /// UploadPart: the part's ETag.
    func uploadPart(
        _ key: String, uploadID: String, number: Int, _ bytes: [UInt8]
    ) throws(StoreError) -> String {
        let response = try send(
            "PUT", key: key, query: [("partNumber", String(number)), ("uploadId", uploadID)], body: bytes)
        guard let tag = response.header("ETag"), !tag.isEmpty else { throw .io("S3 UploadPart: no ETag", 0) }
        return tag
    }

    /// CompleteMultipartUpload of `parts` (number and ETag, in order).
    func completeMultipart(_ key: String, uploadID: String, parts: [(Int, String)]) throws(StoreError) {
        var xml = "<CompleteMultipartUpload>"
        for (number, tag) in parts {
            xml += "<Part><PartNumber>\(number)</PartNumber><ETag>\(Self.escaped(tag))</ETag></Part>"
        }
        xml += "</CompleteMultipartUpload>"
        let response = try send("POST", key: key, query: [("uploadId", uploadID)], body: Array(xml.utf8))
        // A 200 whose body is an error: S3 may fail a completion after it began answering.
        if let code = XMLScan(response.body).first("Code"), XMLScan(response.body).first("Error") != nil {
            throw .io("S3 POST uploadId: \(code) (200)", 0)
        }
    }

    /// AbortMultipartUpload (one already gone is no error).
    func abortMultipart(_ key: String, uploadID: String) throws(StoreError) {
        _ = try send("DELETE", key: key, query: [("uploadId", uploadID)], accepting: [404])
    }

    /// ListObjectsV2 under `prefix`, every page: the keys.
    func keys(prefix: String) throws(StoreError) -> [String] {
        var keys: [String] = []
        var token: String?
        repeat {
            var query = [("list-type", "2"), ("prefix", prefix)]
            if let token { query.append(("continuation-token", token)) }
            let scan = XMLScan(try send("GET", key: nil, query: query, maxBody: 1 << 24).body)
            keys += scan.elements("Contents").compactMap { $0.first("Key") }
            token = scan.first("IsTruncated") == "true" ? scan.first("NextContinuationToken") : nil
        } while token != nil
        return keys
    }

    /// ListMultipartUploads under `prefix`, every page: each upload's key and UploadId.
    func multipartUploads(prefix: String) throws(StoreError) -> [(key: String, uploadID: String)] {
        var found: [(key: String, uploadID: String)] = []
        var markers: (key: String, id: String)?
        repeat {
            var query = [("uploads", ""), ("prefix", prefix)]
            if let markers { query += [("key-marker", markers.key), ("upload-id-marker", markers.id)] }
            let scan = XMLScan(try send("GET", key: nil, query: query, maxBody: 1 << 24).body)
            for upload in scan.elements("Upload") {
                if let key = upload.first("Key"), let id = upload.first("UploadId") {
                    found.append((key, id))
                }
            }
            markers = nil
            if scan.first("IsTruncated") == "true", let key = scan.first("NextKeyMarker"),
                let id = scan.first("NextUploadIdMarker")
            {
                markers = (key, id)
            }
        } while markers != nil
        return found
    }

    private static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
