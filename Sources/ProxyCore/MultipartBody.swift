import HTTP1
import HTTPCore
import MultipartParsing
import UploadRules

/// A request's multipart parser and the route's rules it feeds; the rules re-encode into the
/// request body sink under a fresh boundary. A class: its exchange reads it through
/// `multipart?.` many times per request, and as a struct each read copied (retained, then
/// released) every buffer of the parser and the rules.
final class MultipartBody<Sink: RequestBodySink> {
    var parser: MultipartParser
    var rewriter: RulePipeline<FramedSink<Sink>>

    /// The parser and rules for a multipart body of `type` on `route`; throws why it is
    /// refused. (An initializer, not a `Result`: the body is built where it is kept, not
    /// copied out of an enum, which retained and released every buffer it holds.)
    ///
    /// `buffers`, taken from the body of the connection's last request, are reused (none of
    /// its state is kept).
    init(
        _ type: MediaType, route: Route?, head: RequestHead, limits: Limits, identity: Identity?, sink: Sink,
        tools: RuleTools, now: Int64, buffers: consuming Buffers?
    ) throws(ProxyError) {
        var parserBuffers = MultipartParser.Buffers()
        var ruleBuffers = RulePipeline<FramedSink<Sink>>.Buffers()
        // Moved out, not copied: a second reference made the parser copy them again.
        if var taken = buffers.take() {
            swap(&parserBuffers, &taken.parser)
            swap(&ruleBuffers, &taken.rules)
        }
        let boundary: [UInt8]
        do throws(HTTPCoreError) {
            boundary = try type.multipartBoundary()
        } catch {
            throw ProxyError(.badRequest, detail: "multipart boundary is missing or invalid")
        }
        do throws(MultipartError) {
            parser = try MultipartParser(
                boundary: boundary, limits: limits.multipart,
                policy: route?.rules.policy ?? MultipartPolicy(),
                requestAnomalies: MultipartAnomalies(requestContentType: type), buffers: consume parserBuffers
            )
        } catch {
            throw ProxyError(error)
        }
        rewriter = RulePipeline(
            rules: route?.rules ?? RuleSet(), sink: FramedSink(sink, chunked: false), headers: head.headers,
            now: now / 1000, identity: identity, maxFileBytes: limits.fileBytes, sniffer: tools.sniffer,
            hashing: tools.hashing, inspectors: tools.inspectors, boundary: ruleBuffers.freshBoundary(),
            buffers: consume ruleBuffers)
        rewriter.borrowsInput = true
        if route?.requestBody == .buffer, rewriter.splitsFiles {
            // order: fields_first — file parts wait in a second spool.
            var files = sink
            files.destination = .fileSpool
            rewriter.deferred = FramedSink(files, chunked: false)
        }
    }

    /// The buffers a body's parser and rules grew, for the connection's next body.
    struct Buffers {
        var parser: MultipartParser.Buffers
        var rules: RulePipeline<FramedSink<Sink>>.Buffers
        /// The last request's multipart type, for the next one's to be parsed in its storage.
        var mediaType: MediaType?
    }

    /// Takes the buffers of `body` when nothing else holds it (a pending digest or verdict
    /// may), and lets it go: the body of an ended exchange, taken as the exchange ends, so
    /// nothing it holds (the request's headers) outlives the exchange.
    static func takeBuffers(_ body: inout MultipartBody?) -> Buffers? {
        guard var taken = body.take(), isKnownUniquelyReferenced(&taken) else { return nil }
        var buffers = Buffers(
            parser: taken.parser.takeBuffers(), rules: taken.rewriter.takeBuffers(), mediaType: nil)
        _ = consume taken
        // The body is gone: the kept request object lets go of the request's headers.
        buffers.rules.forgetRequest()
        return buffers
    }

    /// Parses `bytes`; parser errors and rule refusals become the client's error.
    func feed(_ bytes: UnsafeRawBufferPointer) throws(ProxyError) {
        defer { rewriter.inputEnds() }
        do throws(MultipartError) {
            try parser.feed(bytes, into: &rewriter)
        } catch {
            throw ProxyError(error)
        }
        if let refusal = rewriter.refusal { throw ProxyError(refusal) }
    }

    /// Ends the body: the closing delimiter must have been read.
    func finish() throws(ProxyError) {
        do throws(MultipartError) {
            try parser.finish(into: &rewriter)
        } catch {
            throw ProxyError(error)
        }
        if let refusal = rewriter.refusal { throw ProxyError(refusal) }
    }

    /// Points the rules' output at `sink` (and, with `order: fields_first`, the file parts
    /// at the file spool).
    func direct(to sink: Sink, chunked: Bool) {
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
            parts: rewriter.records, injected: rewriter.injected, providers: rewriter.providers,
            objectKey: rewriter.objectKey, anomalies: parser.anomalies.names, files: parser.fileCount)
    }
}
