import MultipartParsing
import UploadRules

/// A request's multipart parser and the route's rules it feeds; the rules re-encode into a
/// `BodySink` under a fresh boundary.
struct MultipartPipeline {
    var parser: MultipartParser
    var rewriter: RulePipeline<BodySink>

    /// Parses `bytes`; parser errors and rule refusals become the client's error.
    mutating func feed(_ bytes: UnsafeRawBufferPointer) throws(ProxyError) {
        do throws(MultipartError) {
            try parser.feed(bytes, into: &rewriter)
        } catch {
            throw ProxyError(error)
        }
        if let refusal = rewriter.refusal {
            throw ProxyError(
                refusal.status == 415 ? .unsupportedMediaType : .badRequest, detail: refusal.description)
        }
    }

    /// Ends the body: the closing delimiter must have been read.
    mutating func finish() throws(ProxyError) {
        do throws(MultipartError) {
            try parser.finish(into: &rewriter)
        } catch {
            throw ProxyError(error)
        }
        if let refusal = rewriter.refusal {
            throw ProxyError(
                refusal.status == 415 ? .unsupportedMediaType : .badRequest, detail: refusal.description)
        }
    }
}
