import HTTPCore
import Resumable

/// Where an upload's bytes are in the bucket, recorded in its `.info` object after the
/// `UploadInfo` lines (which `UploadInfo.decode` reads, ignoring these):
///
/// - `s3-multipart ID`: the multipart upload of `{prefix}{id}` (base64), once a part was sent;
/// - `s3-parts N:SIZE:ETAG …`: its parts, in order (ETags base64);
/// - `s3-tail SIZE SHA256`: the bytes past the last part, in `{prefix}{id}.tail.{START}` (START
///   being the parts' total): its first SIZE bytes, whose digest is SHA256;
/// - `s3-final SIZE`: the multipart upload is complete (or the object put whole): the bytes are
///   the object `{prefix}{id}`.
///
/// The offset the record states is the parts' sizes plus the tail's, or the final size.
public struct S3UploadState: Equatable, Sendable {
    public struct Part: Equatable, Sendable {
        public var number: Int
        public var size: Int64
        public var etag: String
    }

    public var multipartID: String?
    public var parts: [Part] = []
    public var tailSize: Int = 0
    /// SHA-256 of the tail's first `tailSize` bytes, hex.
    public var tailDigest: String?
    public var finalSize: Int64?

    public init() {}

    /// The bytes in parts: where the tail starts.
    public var partsSize: Int64 { parts.reduce(0) { $0 + $1.size } }

    /// The bytes the state holds.
    public var size: Int64 { finalSize ?? partsSize + Int64(tailSize) }

    /// The lines appended to the record.
    var lines: [String] {
        var lines: [String] = []
        if let multipartID { lines.append("s3-multipart " + Base64.encoded(Array(multipartID.utf8))) }
        if !parts.isEmpty {
            lines.append(
                "s3-parts "
                    + parts.map { "\($0.number):\($0.size):\(Base64.encoded(Array($0.etag.utf8)))" }
                    .joined(separator: " "))
        }
        if tailSize > 0, let tailDigest { lines.append("s3-tail \(tailSize) \(tailDigest)") }
        if let finalSize { lines.append("s3-final \(finalSize)") }
        return lines
    }

    /// The record: `info`'s lines, then the state's.
    func record(_ info: UploadInfo) -> [UInt8] {
        info.encoded + Array(lines.map { $0 + "\n" }.joined().utf8)
    }

    /// Reads the record `record` wrote: nil when a state line is malformed.
    static func decode(_ bytes: [UInt8]) -> S3UploadState? {
        var state = S3UploadState()
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("s3-")
        {
            let words = line.split(separator: " ")
            switch words.first {
            case "s3-multipart":
                guard words.count == 2, let raw = Base64.decoded(words[1].utf8) else { return nil }
                state.multipartID = String(decoding: raw, as: UTF8.self)
            case "s3-parts":
                for word in words.dropFirst() {
                    let fields = word.split(separator: ":")
                    guard fields.count == 3, let number = Int(fields[0]), let size = Int64(fields[1]),
                        let tag = Base64.decoded(fields[2].utf8), number == state.parts.count + 1, size > 0
                    else { return nil }
                    state.parts.append(
                        Part(number: number, size: size, etag: String(decoding: tag, as: UTF8.self)))
                }
            case "s3-tail":
                guard words.count == 3, let size = Int(words[1]), size > 0, words[2].utf8.count == 64 else {
                    return nil
                }
                state.tailSize = size
                state.tailDigest = String(words[2])
            case "s3-final":
                guard words.count == 2, let size = Int64(words[1]), size >= 0 else { return nil }
                state.finalSize = size
            default:
                return nil
            }
        }
        return state
    }
}
