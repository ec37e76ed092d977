import MultipartParsing
import UploadRules

/// A request's multipart parser and the route's rules it feeds; the rules re-encode into the
/// request body sink under a fresh boundary. Held in place by its exchange (never copied
/// while it runs).
struct MultipartBody<Sink: RequestBodySink> {
    var parser: MultipartParser
    var rewriter: RulePipeline<FramedSink<Sink>>

    /// Parses `bytes`; parser errors and rule refusals become the client's error.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(ProxyError) {
        do throws(MultipartError) {
            try parser.feed(bytes, into: &rewriter)
        } catch {
            throw ProxyError(error)
        }
        if let refusal = rewriter.refusal { throw ProxyError(refusal) }
    }

    /// Ends the body: the closing delimiter must have been read.
    mutating func finish() throws(ProxyError) {
        do throws(MultipartError) {
            try parser.finish(into: &rewriter)
        } catch {
            throw ProxyError(error)
        }
        if let refusal = rewriter.refusal { throw ProxyError(refusal) }
    }

    /// Points the rules' output at `sink` (and, with `order: fields_first`, the file parts
    /// at the file spool).
    mutating func direct(to sink: Sink, chunked: Bool) {
        rewriter.sink = FramedSink(sink, chunked: chunked)
        if rewriter.deferred != nil {
            var files = sink
            files.destination = .fileSpool
            rewriter.deferred = FramedSink(files, chunked: false)
        }
    }

    /// What the log records of the body.
    var summary: AccessRecord.Multipart {
        AccessRecord.Multipart(
            parts: rewriter.records, injected: rewriter.injected,
            anomalies: parser.anomalies.names, files: parser.fileCount)
    }
}
