public import HTTPCore

/// One tus request, read from its method, path and header fields before any store is
/// touched: what it asks for, or the status that refuses it.
public enum TusRequest: Equatable, Sendable {
    /// `OPTIONS`: the server's capabilities (204).
    case options
    /// `POST` to the creation URL (creation, creation-defer-length, concatenation); `withBody`
    /// when bytes follow (creation-with-upload).
    case create(Creation)
    /// `HEAD` of an upload.
    case head(UploadID)
    /// `PATCH` of an upload.
    case patch(Patch)
    /// `DELETE` of an upload (termination).
    case delete(UploadID)

    public struct Creation: Equatable, Sendable {
        /// `Upload-Length`, or nil with `Upload-Defer-Length: 1` (or for a final upload).
        public var length: Int64?
        public var metadata: UploadMetadata
        public var concat: Concat
        /// Bytes follow, as `application/offset+octet-stream`.
        public var withBody: Bool
        /// The checksum of those bytes, if given.
        public var checksum: Checksum?
    }

    public enum Concat: Equatable, Sendable {
        case none
        case partial
        case final([UploadID])
    }

    public struct Checksum: Equatable, Sendable {
        public var algorithm: TusHeaders.ChecksumAlgorithm
        public var digest: [UInt8]
    }

    public struct Patch: Equatable, Sendable {
        public var id: UploadID
        /// `Upload-Offset`: where the bytes go.
        public var offset: Int64
        /// `Upload-Length`, allowed once on an upload whose length was deferred.
        public var length: Int64?
        public var checksum: Checksum?
    }

    /// A refusal: the status and a short reason for the body and the log.
    public struct Refusal: Error, Equatable, Sendable {
        public var status: Int
        public var reason: String

        public init(_ status: Int, _ reason: String) {
            self.status = status
            self.reason = reason
        }
    }

    /// Reads a request to the route mounted at `prefix` (its creation URL; uploads live at
    /// `prefix/<id>`). `path` is the request path without its query.
    ///
    /// - Parameter maxSize: `Tus-Max-Size`: a larger `Upload-Length` is 413.
    public static func read(
        method: String, path: String, headers: HeaderFields, prefix: String, maxSize: Int64
    ) throws(Refusal) -> TusRequest {
        var method = method
        if method == "POST", let override = try single(headers, "X-HTTP-Method-Override") {
            // For clients that cannot send PATCH or DELETE (the protocol's advice to servers).
            let name = String(decoding: override, as: UTF8.self)
            guard ["PATCH", "DELETE", "HEAD", "OPTIONS", "POST"].contains(name) else {
                throw Refusal(400, "unsupported X-HTTP-Method-Override")
            }
            method = name
        }
        if method == "OPTIONS" { return .options }
        guard try single(headers, "Tus-Resumable").map({ $0.elementsEqual(TusHeaders.version.utf8) }) == true
        else { throw Refusal(412, "Tus-Resumable 1.0.0 required") }
        let base = prefix.hasSuffix("/") ? String(prefix.dropLast()) : prefix
        let rest: Substring
        if path == base || path == base + "/" {
            rest = ""
        } else if path.hasPrefix(base + "/") {
            rest = path.dropFirst(base.count + 1)
        } else {
            throw Refusal(404, "not a tus URL")
        }
        if rest.isEmpty {
            guard method == "POST" else { throw Refusal(405, "the creation URL takes POST and OPTIONS") }
            return .create(try creation(headers, base: base, maxSize: maxSize))
        }
        guard let id = UploadID(rest) else { throw Refusal(404, "no such upload") }
        switch method {
        case "HEAD": return .head(id)
        case "DELETE": return .delete(id)
        case "PATCH":
            try requireOffsetStream(headers)
            guard let offsetValue = try single(headers, "Upload-Offset") else {
                throw Refusal(400, "Upload-Offset required")
            }
            guard let offset = TusHeaders.nonNegativeInteger(offsetValue) else {
                throw Refusal(400, "invalid Upload-Offset")
            }
            var length: Int64?
            if let value = try single(headers, "Upload-Length") {
                guard let parsed = TusHeaders.nonNegativeInteger(value) else {
                    throw Refusal(400, "invalid Upload-Length")
                }
                guard parsed <= maxSize else { throw Refusal(413, "Upload-Length over Tus-Max-Size") }
                length = parsed
            }
            return .patch(Patch(id: id, offset: offset, length: length, checksum: try checksum(headers)))
        default:
            throw Refusal(405, "an upload takes HEAD, PATCH, DELETE and OPTIONS")
        }
    }

    private static func creation(_ headers: HeaderFields, base: String, maxSize: Int64) throws(Refusal)
        -> Creation
    {
        var concat = Concat.none
        if let value = try single(headers, "Upload-Concat") {
            switch TusHeaders.concat(String(decoding: value, as: UTF8.self)) {
            case .partial: concat = .partial
            case .final(let urls):
                var ids: [UploadID] = []
                for url in urls {
                    guard let id = uploadID(in: url, base: base) else {
                        throw Refusal(400, "Upload-Concat names an upload of another URL")
                    }
                    ids.append(id)
                }
                concat = .final(ids)
            case nil: throw Refusal(400, "invalid Upload-Concat")
            }
        }
        let lengthValue = try single(headers, "Upload-Length")
        let deferValue = try single(headers, "Upload-Defer-Length")
        var length: Int64?
        if case .final = concat {
            // The final upload's length is the sum of its partial uploads'.
            guard lengthValue == nil, deferValue == nil else {
                throw Refusal(400, "a final upload takes no Upload-Length")
            }
        } else {
            switch (lengthValue, deferValue) {
            case (let value?, nil):
                guard let parsed = TusHeaders.nonNegativeInteger(value) else {
                    throw Refusal(400, "invalid Upload-Length")
                }
                guard parsed <= maxSize else { throw Refusal(413, "Upload-Length over Tus-Max-Size") }
                length = parsed
            case (nil, let value?):
                guard value.elementsEqual("1".utf8) else {
                    throw Refusal(400, "Upload-Defer-Length must be 1")
                }
            case (nil, nil): throw Refusal(400, "Upload-Length or Upload-Defer-Length required")
            case (_?, _?): throw Refusal(400, "both Upload-Length and Upload-Defer-Length")
            }
        }
        var metadata = UploadMetadata()
        if let value = try single(headers, "Upload-Metadata") {
            do {
                metadata = try UploadMetadata.parse(value)
            } catch {
                throw Refusal(400, "invalid Upload-Metadata")
            }
        }
        var withBody = false
        if headers.contains("Content-Type") {
            try requireOffsetStream(headers)
            withBody = true
            if case .final = concat { throw Refusal(400, "a final upload takes no bytes") }
        }
        return Creation(
            length: length, metadata: metadata, concat: concat, withBody: withBody,
            checksum: try checksum(headers))
    }

    /// The id at the end of `url` (absolute, or a path) when it is an upload of this route.
    static func uploadID(in url: String, base: String) -> UploadID? {
        var path = Substring(url)
        if !path.hasPrefix("/") {
            // An absolute URL: the path starts at the first "/" after "scheme://".
            guard let colon = path.firstIndex(of: ":"), path[colon...].hasPrefix("://") else { return nil }
            let authority = path[path.index(colon, offsetBy: 3)...]
            guard let slash = authority.firstIndex(of: "/") else { return nil }
            path = authority[slash...]
        }
        guard path.hasPrefix(base + "/") else { return nil }
        return UploadID(path.dropFirst(base.count + 1))
    }

    private static func requireOffsetStream(_ headers: HeaderFields) throws(Refusal) {
        guard let type = try single(headers, "Content-Type"),
            asciiCaseInsensitiveEquals(type, TusHeaders.offsetOctetStream.utf8)
        else { throw Refusal(415, "Content-Type must be application/offset+octet-stream") }
    }

    private static func checksum(_ headers: HeaderFields) throws(Refusal) -> Checksum? {
        guard let value = try single(headers, "Upload-Checksum") else { return nil }
        do {
            let (algorithm, digest) = try TusHeaders.checksum(String(decoding: value, as: UTF8.self))
            return Checksum(algorithm: algorithm, digest: digest)
        } catch {
            throw Refusal(400, "invalid Upload-Checksum")
        }
    }

    /// The one value of `name`; a repeated field is refused (either copy could be the one
    /// meant).
    private static func single(_ headers: HeaderFields, _ name: String) throws(Refusal) -> [UInt8]? {
        var found: [UInt8]?
        var count = 0
        headers.forEachField { fieldName, value in
            if asciiCaseInsensitiveEquals(fieldName, name.utf8) {
                count += 1
                if found == nil { found = Array(value) }
            }
        }
        guard count <= 1 else { throw Refusal(400, "repeated \(name)") }
        return found
    }
}
