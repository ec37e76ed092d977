import HTTPCore
public import MultipartEncoding

/// The multipart body that delivers a finished upload: one part per configured field whose
/// key the upload's metadata has (in the configured order), then the file, named by the
/// `filename` metadata and typed by `filetype` (when it is a valid media type), then the
/// closing delimiter. The file's bytes go between `head` and `tail` straight from the store,
/// so `contentLength` is exact before the first byte is sent.
public struct DeliveryForm: Sendable {
    /// Everything before the file's bytes: the fields and the file part's head.
    public let head: [UInt8]
    /// The closing delimiter.
    public let tail: [UInt8]
    /// The `Content-Type` of the request.
    public let contentType: String
    /// The file's length.
    public let fileLength: Int64

    /// The body's exact length.
    public var contentLength: Int64 { Int64(head.count) + fileLength + Int64(tail.count) }

    /// The form for `info` (complete: its length is known) under `settings`.
    public init(
        _ info: UploadInfo, settings: TusSettings, boundary: Boundary = .random()
    ) throws(MultipartEncodingError) {
        var encoder = MultipartEncoder(boundary: boundary)
        var sink = ByteArraySink(capacity: 512)
        for key in settings.fields {
            guard let pair = info.metadata.pairs.first(where: { $0.key == key }) else { continue }
            try encoder.beginPart(ContentDisposition(name: Array(key.utf8)), into: &sink)
            sink.write(pair.value ?? [])
        }
        let filename = info.metadata["filename"].flatMap { $0.isEmpty ? nil : $0 } ?? Array("upload".utf8)
        var headers = HeaderFields()
        headers.append(name: "Content-Type", value: Self.fileType(info.metadata["filetype"]))
        try encoder.beginPart(
            ContentDisposition(name: Array(settings.fileField.utf8), filename: filename), headers: headers,
            into: &sink)
        head = sink.bytes
        var closing = ByteArraySink(capacity: 64)
        try encoder.finish(into: &closing)
        tail = closing.bytes
        contentType = "multipart/form-data; boundary=\(boundary)"
        fileLength = info.length ?? info.offset
    }

    /// The file part's type: the `filetype` metadata when it is a media type, else
    /// `application/octet-stream` (the rules may sniff the real one).
    public static func fileType(_ value: [UInt8]?) -> String {
        guard let value, value.count <= 255, let text = String(validating: value, as: UTF8.self),
            let type = try? MediaType.parse(text)
        else { return "application/octet-stream" }
        return type.essence
    }
}
