import HTTPCore
import MultipartEncoding
import MultipartParsing

/// Re-encodes a multipart body as it streams: parser events in, a canonical body under a
/// fresh boundary out, into a `BodySink`. Records each part for the access log.
struct MultipartRewriter: MultipartEventHandler {
    struct PartRecord {
        var name: String
        var filename: String?
        var contentType: String?
        var bytes: Int64 = 0
    }

    var encoder: MultipartEncoder
    var sink: BodySink
    var parts: [PartRecord] = []
    var encodingError: MultipartEncodingError?

    init(sink: BodySink) {
        self.encoder = MultipartEncoder()
        self.sink = sink
    }

    mutating func handle(_ event: MultipartEvent) {
        switch event {
        case .partBegin(let head):
            var headers = head.headers
            headers.removeAll(named: "Content-Disposition")
            if let inline = head.disposition.inlineContentType, !headers.contains("Content-Type") {
                headers.append(HeaderFields.Field(name: Array("Content-Type".utf8), value: inline))
            }
            let disposition = ContentDisposition(name: head.name, filename: head.filename)
            do throws(MultipartEncodingError) {
                try encoder.beginPart(disposition, headers: headers, into: &sink)
            } catch {
                encodingError = error
            }
            parts.append(
                PartRecord(
                    name: head.nameString, filename: head.filenameString,
                    contentType: head.headers["Content-Type"]))
        case .body(let bytes):
            sink.write(bytes)
            parts[parts.count - 1].bytes += Int64(bytes.count)
        case .partEnd:
            break
        case .end:
            do throws(MultipartEncodingError) {
                try encoder.finish(into: &sink)
            } catch {
                encodingError = error
            }
        }
    }
}

/// A parser and the rewriter it feeds.
struct MultipartPipeline {
    var parser: MultipartParser
    var rewriter: MultipartRewriter

    mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(MultipartError) {
        try parser.feed(bytes, into: &rewriter)
    }

    mutating func finish() throws(MultipartError) {
        try parser.finish(into: &rewriter)
    }
}
