/// Why a request was refused as malformed (RFC 9113 §8.2, §8.3.1); for logs, never shown
/// to the client.
public enum HTTP2MalformedReason: String, Equatable, Sendable {
    /// A field name with an uppercase letter (§8.2.1).
    case uppercaseName = "uppercase field name"
    /// A field name that is empty or has a byte a token does not allow.
    case invalidName = "invalid field name"
    /// A field value with NUL, CR, LF or surrounding whitespace.
    case invalidValue = "invalid field value"
    /// `connection`, `keep-alive`, `proxy-connection`, `transfer-encoding` or `upgrade`
    /// (§8.2.2).
    case connectionSpecificField = "connection-specific field"
    /// `te` with a value other than `trailers` (§8.2.2).
    case teNotTrailers = "te other than trailers"
    /// A pseudo-header this server does not know (`:protocol` included: extended CONNECT is
    /// not offered).
    case unknownPseudoHeader = "unknown pseudo-header"
    /// `:status` in a request.
    case responsePseudoHeader = "response pseudo-header in a request"
    /// A pseudo-header after a regular field (§8.3).
    case pseudoHeaderAfterField = "pseudo-header after a regular field"
    /// A pseudo-header sent twice.
    case duplicatePseudoHeader = "duplicated pseudo-header"
    /// `:method`, `:scheme` or `:path` missing or empty.
    case missingPseudoHeader = "missing pseudo-header"
    /// A `:path` that is neither origin-form nor `*` for OPTIONS.
    case invalidPath = "invalid :path"
    /// A `host` field naming another authority than `:authority`, or two `host` fields
    /// (RFC 9113 §8.3.1: a routing confusion a proxy must not forward).
    case hostDiffersFromAuthority = "host differs from :authority"
    /// CONNECT: FormGate proxies uploads, not tunnels.
    case connectMethod = "CONNECT refused"
    /// libnghttp2 refused a field of the header block (its own RFC 9113 checks).
    case invalidField = "invalid header field"
    /// libnghttp2 refused the message as a whole: pseudo-headers missing, trailers with
    /// pseudo-headers, or DATA that disagrees with `content-length`.
    case invalidMessage = "invalid message"
}
