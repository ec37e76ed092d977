import HTTP1
import HTTPCore
import UploadRules

/// A `stream` route whose store needs an exact `Content-Length` (S3, OSS, COS and Qiniu refuse
/// chunked uploads) and whose file is the last part (`RuleSet.lengthFollowsFile`): the
/// upstream head waits until the file's head is re-encoded. From then on the body's length
/// follows from the client's `Content-Length` (`RulePipeline.lengthAfterFileHead`), so the head
/// goes with it and the file streams through. What came before the file (the fields and the
/// sniff window) waits in the staging buffer, at most `maxStagedBeforeFile` bytes.
extension ExchangeRequest {
    /// The most re-encoded bytes held before the file's head while the length is not known.
    static var maxStagedBeforeFile: Int { 1 << 20 }

    /// Turns the mode on for a body the rules re-encode, when the client declared its length.
    mutating func prepareDeclaredLength(route: Route?) {
        guard route?.requestBody == .stream, route?.rules.lengthFollowsFile == true,
            case .length(let length) = upstreamFraming
        else { return }
        pendingLength = PendingLength(clientLength: length)
    }

    /// After the rules ran on more input: declares the length once the file's head is out.
    /// Returns whether it was declared now.
    mutating func declareLengthIfKnown() -> Bool {
        guard let pending = pendingLength, multipart != nil,
            let length = multipart!.rewriter.lengthAfterFileHead(
                clientLength: pending.clientLength, clientCloseLength: multipart!.parser.closeDelimiterLength)
        else { return false }
        pendingLength = nil
        multipart!.rewriter.declareLength(length)
        upstreamFraming = .length(length)
        return true
    }

    /// Whether the bytes staged before the file's head passed `maxStagedBeforeFile` (`staged`
    /// waiting) while the length is not known.
    func stagedTooMuch(_ staged: Int) -> ProxyError? {
        guard pendingLength != nil, staged > Self.maxStagedBeforeFile else { return nil }
        return ProxyError(
            .payloadTooLarge,
            detail:
                "more than \(Self.maxStagedBeforeFile >> 20) MiB before the file: a stream route whose store needs a Content-Length holds the fields until the file begins (use request_body: buffer)"
        )
    }
}

/// What a `stream` route that declares its body's length needs until it does.
struct PendingLength {
    /// The client's `Content-Length`.
    var clientLength: Int64
}
