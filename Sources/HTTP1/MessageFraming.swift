public import HTTPCore

/// How a message body is delimited (RFC 9112 §6).
public enum BodyFraming: Equatable, Sendable {
    /// No body.
    case none
    /// Exactly this many bytes.
    case length(Int64)
    /// Chunked transfer coding.
    case chunked
    /// Until the connection closes (responses only).
    case untilClose
    /// Until the HTTP/2 stream ends (END_STREAM): a request without `content-length` (RFC 9113
    /// §8.1). Its decoder learns the end from `BodyDecoder.endStream(remaining:)`.
    case untilEndOfStream
}

/// Framing decisions, strict where a disagreement between two parsers would let a request be
/// smuggled: the proxy never forwards a message whose length it could read two ways.
public enum MessageFraming {
    /// The body framing of a request. Refuses Content-Length with Transfer-Encoding,
    /// duplicate or malformed Content-Length, Transfer-Encoding other than exactly `chunked`,
    /// and Transfer-Encoding in HTTP/1.0.
    public static func request(_ head: RequestHead) throws(HTTP1Error) -> BodyFraming {
        let lengths = head.headers.count(of: "Content-Length")
        if head.headers.contains("Transfer-Encoding") {
            guard lengths == 0 else { throw HTTP1Error(.contentLengthWithTransferEncoding) }
            guard head.version == .http11, transferCodings(head.headers) == ["chunked"] else {
                throw HTTP1Error(.unsupportedTransferEncoding)
            }
            return .chunked
        }
        guard lengths > 0 else { return .none }
        guard lengths == 1, let length = parseContentLength(head.headers.firstValue("Content-Length")!) else {
            throw HTTP1Error(.invalidContentLength)
        }
        return length == 0 ? .none : .length(length)
    }

    /// The body framing of a request an HTTP/2 stream carries (RFC 9113 §8.1.1): its
    /// `content-length` when it sent one (`.length(0)` for 0 on a stream still open: DATA may
    /// yet come and make it malformed), else until the stream ends; `.none` when the HEADERS
    /// frame ended the stream. Refuses a malformed or repeated `content-length`, and one above 0
    /// on a stream that ended with its HEADERS. (The transport refuses `transfer-encoding`
    /// before: it is connection-specific in HTTP/2, RFC 9113 §8.2.2.)
    public static func http2Request(_ head: RequestHead, endsStream: Bool) throws(HTTP1Error) -> BodyFraming {
        let lengths = head.headers.count(of: "Content-Length")
        guard lengths > 0 else { return endsStream ? .none : .untilEndOfStream }
        guard lengths == 1, let length = parseContentLength(head.headers.firstValue("Content-Length")!),
            !endsStream || length == 0
        else {
            throw HTTP1Error(.invalidContentLength)
        }
        return endsStream ? .none : .length(length)
    }

    /// The body framing of a response to a request with `requestMethod` (RFC 9112 §6.3).
    public static func response(_ head: ResponseHead, requestMethod: String) throws(HTTP1Error) -> BodyFraming
    {
        if requestMethod == "HEAD" || (100..<200).contains(head.status) || head.status == 204
            || head.status == 304
        {
            return .none
        }
        if head.headers.contains("Transfer-Encoding") {
            guard head.version == .http11 else { throw HTTP1Error(.unsupportedTransferEncoding) }
            return transferCodings(head.headers).last == "chunked" ? .chunked : .untilClose
        }
        let lengths = head.headers.count(of: "Content-Length")
        guard lengths > 0 else { return .untilClose }
        guard lengths == 1, let length = parseContentLength(head.headers.firstValue("Content-Length")!) else {
            throw HTTP1Error(.invalidContentLength)
        }
        return .length(length)
    }

    /// The transfer codings of every Transfer-Encoding field, lower-cased, in order.
    static func transferCodings(_ headers: HeaderFields) -> [String] {
        var codings: [String] = []
        headers.forEachField { name, value in
            guard asciiCaseInsensitiveEquals(name, "transfer-encoding".utf8) else { return }
            for coding in String(decoding: value, as: UTF8.self).split(
                separator: ",", omittingEmptySubsequences: false)
            {
                codings.append(coding.trimmingWhitespace().lowercased())
            }
        }
        return codings
    }

    /// `1*DIGIT` that fits in an Int64; anything else (signs, spaces, lists) is `nil`.
    public static func parseContentLength(_ value: some Collection<UInt8>) -> Int64? {
        guard !value.isEmpty, value.count <= 18, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return value.reduce(0) { $0 * 10 + Int64($1 - 0x30) }
    }
}

extension HeaderFields {
    /// The hop-by-hop fields of RFC 9110 §7.6.1 and every field named in `Connection`.
    public static let hopByHopNames = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
    ]

    static let hopByHopBytes = hopByHopNames.map { Array($0.utf8) }

    /// Removes hop-by-hop fields and the fields that `Connection` names, in one pass.
    public mutating func removeHopByHop() {
        removeHopByHop(alsoRemoving: [])
    }

    /// Removes hop-by-hop fields, the fields that `Connection` names and the fields named in
    /// `names` (compared without regard to case), in one pass.
    public mutating func removeHopByHop(alsoRemoving names: [[UInt8]]) {
        // A copy of the list to read the `Connection` tokens from only when there is a
        // `Connection` field: the copy shares the fields' array, which then has to be copied as
        // fields are removed (an allocation per head).
        let tokens = contains("Connection") ? ConnectionTokens(self) : nil
        removeFields(whereName: { name in
            guard !Self.hopByHopBytes.contains(where: { asciiCaseInsensitiveEquals(name, $0) }),
                !names.contains(where: { asciiCaseInsensitiveEquals(name, $0) })
            else {
                return true
            }
            var named = false
            tokens?.forEachToken { token in
                if asciiCaseInsensitiveEquals(name, token) { named = true }
            }
            return named
        })
    }
}
