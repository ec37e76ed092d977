/// The reason phrases upstreams commonly send, each one array shared by every response head
/// that carries it: a parsed head then holds a reference, not a new copy of `OK`.
enum ReasonPhrases {
    static let common: [[UInt8]] = [
        "OK", "Created", "Accepted", "No Content", "Moved Permanently", "Found", "See Other",
        "Not Modified", "Bad Request", "Unauthorized", "Forbidden", "Not Found", "Method Not Allowed",
        "Request Entity Too Large", "Payload Too Large", "Content Too Large", "Unsupported Media Type",
        "Unprocessable Entity", "Too Many Requests", "Internal Server Error", "Bad Gateway",
        "Service Unavailable", "Gateway Timeout",
    ].map { Array($0.utf8) }

    /// The shared array equal to `phrase`, if it is a common one.
    static func shared(_ phrase: ArraySlice<UInt8>) -> [UInt8]? {
        for candidate in common where candidate.count == phrase.count && candidate.elementsEqual(phrase) {
            return candidate
        }
        return nil
    }
}
