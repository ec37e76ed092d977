import MultipartParsing
import UploadRules

/// A request's multipart parser and the route's rules it feeds; the rules re-encode into a
/// `BodySink` under a fresh boundary. A class: the exchange feeds it in place, never copies.
final class MultipartPipeline {
    var parser: MultipartParser
    var rewriter: RulePipeline<BodySink>

    init(parser: MultipartParser, rewriter: RulePipeline<BodySink>) {
        self.parser = parser
        self.rewriter = rewriter
    }

    /// Parses `bytes`; parser errors and rule refusals become the client's error.
    func feed(_ bytes: UnsafeRawBufferPointer) throws(ProxyError) {
        do throws(MultipartError) {
            try parser.feed(bytes, into: &rewriter)
        } catch {
            throw ProxyError(error)
        }
        if let refusal = rewriter.refusal { throw Self.error(refusal) }
    }

    /// Ends the body: the closing delimiter must have been read.
    func finish() throws(ProxyError) {
        do throws(MultipartError) {
            try parser.finish(into: &rewriter)
        } catch {
            throw ProxyError(error)
        }
        if let refusal = rewriter.refusal { throw Self.error(refusal) }
    }

    /// The client's error for a rule refusal: 415 for the type rules, 400 for the rest.
    static func error(_ refusal: RuleRefusal) -> ProxyError {
        switch refusal.reason {
        case .typeNotAllowed, .typeMismatch: ProxyError(.unsupportedMediaType, detail: refusal.description)
        case .unsafeFilename, .encoding: ProxyError(.badRequest, detail: refusal.description)
        }
    }
}
