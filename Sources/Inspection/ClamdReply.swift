/// What clamd answered to one `zINSTREAM` scan (its reply up to the NUL that ends it).
///
/// clamd 1.x answers `stream: OK`, `stream: <signature> FOUND`, or `<message> ERROR` (for
/// instance `INSTREAM size limit exceeded. ERROR` when the stream passes its
/// `StreamMaxLength`). A file over its `MaxFileSize` or `MaxScanSize` is reported, with
/// `AlertExceedsMax yes`, as `stream: Heuristics.Limits.Exceeded.MaxFileSize FOUND`: that is
/// not a verdict on the content but a file clamd did not scan, so it is `limitExceeded`, never
/// `clean` nor `infected`. Anything else is not clamd speaking (`garbage`).
public enum ClamdReply: Sendable, Equatable {
    /// `stream: OK`: nothing found.
    case clean
    /// `stream: <signature> FOUND`: the signature's name (printable ASCII, at most
    /// `maxSignatureLength` characters).
    case infected(signature: String)
    /// clamd's own size-limit heuristic fired: the file was not (wholly) scanned.
    case limitExceeded(signature: String)
    /// clamd reported an error (its message, sanitised like a signature).
    case error(String)
    /// The reply is none of the above.
    case garbage

    /// The longest signature (or error message) kept; longer ones are cut.
    public static let maxSignatureLength = 200
    /// The longest reply read: a peer that sends more without a NUL is not clamd.
    public static let maxReplyLength = 1024

    /// Parses a reply without its terminating NUL (a trailing newline, as the non-`z`
    /// commands end, is accepted too).
    public init(_ reply: some Collection<UInt8>) {
        var bytes = Array(reply)
        while let last = bytes.last, last == 0x0A || last == 0x0D || last == 0 { bytes.removeLast() }
        let prefix = Array("stream: ".utf8)
        if bytes.starts(with: prefix) {
            let rest = bytes[prefix.count...]
            if rest.elementsEqual("OK".utf8) {
                self = .clean
                return
            }
            let found = Array(" FOUND".utf8)
            if rest.count > found.count, rest.suffix(found.count).elementsEqual(found) {
                let name = Self.sanitised(rest.dropLast(found.count))
                guard !name.isEmpty else {
                    self = .garbage
                    return
                }
                self =
                    name.hasPrefix("Heuristics.Limits.Exceeded")
                    ? .limitExceeded(signature: name) : .infected(signature: name)
                return
            }
            // `stream: <message> ERROR` (some versions prefix errors too).
            bytes = Array(rest)
        }
        let error = Array(" ERROR".utf8)
        if bytes.count > error.count, bytes.suffix(error.count).elementsEqual(error) {
            self = .error(Self.sanitised(bytes.dropLast(error.count)))
            return
        }
        self = .garbage
    }

    /// `text` as printable ASCII (other bytes become `?`), cut at `maxSignatureLength`: safe
    /// in a log line and an error body whatever the peer sent.
    static func sanitised(_ text: some Collection<UInt8>) -> String {
        String(
            decoding: text.prefix(maxSignatureLength).map {
                $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?")
            },
            as: UTF8.self)
    }
}
