import HTTP1
public import HTTPCore

/// The answers of a tus route that depend on an upload's record: the checks a request passes
/// before it touches the upload's bytes, and the fields of each response.
public enum TusAnswers {
    /// A response without a body beyond `reason` (a refusal) or none (a success).
    public struct Answer: Equatable, Sendable {
        public var status: Int
        public var headers: HeaderFields
        public var reason: String?

        public init(status: Int, headers: HeaderFields = HeaderFields(), reason: String? = nil) {
            self.status = status
            self.headers = headers
            self.reason = reason
        }
    }

    /// `Tus-Resumable: 1.0.0`, on every response but a successful OPTIONS's own fields.
    static func base() -> HeaderFields {
        var headers = HeaderFields()
        headers.append(name: "Tus-Resumable", value: TusHeaders.version)
        return headers
    }

    /// A refusal, with `Tus-Version` on a 412.
    public static func refusal(_ refusal: TusRequest.Refusal) -> Answer {
        var headers = base()
        if refusal.status == 412 { headers.append(name: "Tus-Version", value: TusHeaders.version) }
        return Answer(status: refusal.status, headers: headers, reason: refusal.reason)
    }

    /// `OPTIONS`: 204 with the capabilities.
    public static func options(maxSize: Int64) -> Answer {
        var headers = base()
        headers.append(name: "Tus-Version", value: TusHeaders.version)
        headers.append(name: "Tus-Extension", value: TusHeaders.extensions.joined(separator: ","))
        headers.append(name: "Tus-Max-Size", value: String(maxSize))
        headers.append(
            name: "Tus-Checksum-Algorithm",
            value: TusHeaders.checksumAlgorithms.map(\.rawValue).joined(separator: ","))
        return Answer(status: 204, headers: headers)
    }

    /// The record `identity` may see: nil (404) when there is none, it expired at `now` (unix
    /// seconds), or another identity created it. Never 403: an id must not tell whether it
    /// exists.
    public static func visible(_ info: UploadInfo?, to identity: String?, now: Int64) -> UploadInfo? {
        guard let info, info.expiresAt > now, info.owner == identity else { return nil }
        return info
    }

    /// `HEAD`: 200 with the offset, the length (or its deferral), the metadata, the
    /// concatenation and the expiry; `Cache-Control: no-store`.
    public static func head(_ info: UploadInfo, locationBase: String) -> Answer {
        var headers = base()
        headers.append(name: "Upload-Offset", value: String(info.offset))
        if let length = info.length {
            headers.append(name: "Upload-Length", value: String(length))
        } else {
            headers.append(name: "Upload-Defer-Length", value: "1")
        }
        if !info.metadata.pairs.isEmpty {
            headers.append(name: "Upload-Metadata", value: info.metadata.serialized)
        }
        appendConcat(info, locationBase: locationBase, to: &headers)
        appendExpiry(info, to: &headers)
        headers.append(name: "Cache-Control", value: "no-store")
        return Answer(status: 200, headers: headers)
    }

    /// What a PATCH may do, decided before any byte is stored.
    public enum PatchPlan: Equatable, Sendable {
        /// Store the bytes at the offset; the record (with a deferred length set, when the
        /// PATCH sets it) is the one to commit.
        case write(UploadInfo)
        /// The upload has all its bytes: this is a retried final PATCH (the client lost the
        /// answer). Its bytes are discarded; the stored answer is replayed, or the delivery
        /// that failed is tried again.
        case complete
    }

    /// Checks a PATCH (or the bytes of a creation-with-upload) against the record: a final
    /// upload 403, another offset 409, a second or a shorter length 400, `declaredBytes` (the
    /// body's `Content-Length`, when known) past the length 413.
    public static func checkPatch(
        _ patch: TusRequest.Patch, _ info: UploadInfo, declaredBytes: Int64?
    ) throws(TusRequest.Refusal) -> PatchPlan {
        if case .final = info.concatenation {
            // Only an empty PATCH at its length: it replays the delivery's answer, or retries it.
            guard info.isComplete, patch.offset == info.length,
                patch.length == nil || patch.length == info.length,
                declaredBytes == 0
            else { throw TusRequest.Refusal(403, "a final upload takes no PATCH") }
            return .complete
        }
        if info.isComplete, let length = info.length, patch.length == nil || patch.length == length,
            patch.offset <= length, declaredBytes.map({ patch.offset + $0 <= length }) ?? true
        {
            return .complete
        }
        guard patch.offset == info.offset else {
            throw TusRequest.Refusal(409, "Upload-Offset is not the upload's offset")
        }
        var info = info
        if let length = patch.length {
            guard info.length == nil else {
                throw TusRequest.Refusal(400, "the upload's length is set already")
            }
            guard length >= info.offset else {
                throw TusRequest.Refusal(400, "Upload-Length below the offset")
            }
            info.length = length
        }
        if let length = info.length, let declaredBytes, declaredBytes > length - info.offset {
            throw TusRequest.Refusal(413, "the bytes go past Upload-Length")
        }
        return .write(info)
    }

    /// The answer to a PATCH whose bytes are committed: 204 with the new offset and expiry.
    public static func patched(_ info: UploadInfo) -> Answer {
        var headers = base()
        headers.append(name: "Upload-Offset", value: String(info.offset))
        appendExpiry(info, to: &headers)
        return Answer(status: 204, headers: headers)
    }

    /// The answer to a creation: 201 with `Location` (`locationBase` + "/" + id), and the offset
    /// when bytes came with it.
    public static func created(_ info: UploadInfo, locationBase: String, withBody: Bool) -> Answer {
        var headers = base()
        headers.append(name: "Location", value: locationBase + "/" + info.id.hex)
        if withBody { headers.append(name: "Upload-Offset", value: String(info.offset)) }
        appendExpiry(info, to: &headers)
        return Answer(status: 201, headers: headers)
    }

    /// The answer to a DELETE: 204.
    public static func terminated() -> Answer { Answer(status: 204, headers: base()) }

    private static func appendConcat(_ info: UploadInfo, locationBase: String, to headers: inout HeaderFields)
    {
        switch info.concatenation {
        case .none: break
        case .partial: headers.append(name: "Upload-Concat", value: "partial")
        case .final(let parts):
            headers.append(
                name: "Upload-Concat",
                value: "final;" + parts.map { locationBase + "/" + $0.hex }.joined(separator: " "))
        }
    }

    private static func appendExpiry(_ info: UploadInfo, to headers: inout HeaderFields) {
        headers.append(name: "Upload-Expires".utf8, value: HTTPDate.format(unixSeconds: info.expiresAt))
    }
}
