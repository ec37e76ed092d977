/// Why an HTTP/1.1 message was refused: framing a peer could read differently, or a limit.
///
/// Only the `Proxy` module turns these into status codes (400, 431, 505, 502).
public struct HTTP1Error: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public enum Reason: String, Equatable, Sendable {
        /// The request line or status line is malformed.
        case invalidStartLine = "invalid_start_line"
        /// The method is not a token.
        case invalidMethod = "invalid_method"
        /// The request target is empty, has controls or spaces, or is not a supported form.
        case invalidTarget = "invalid_target"
        /// `HTTP/x.y` other than 1.0 and 1.1.
        case unsupportedVersion = "unsupported_version"
        /// The version is not `HTTP/DIGIT.DIGIT`.
        case invalidVersion = "invalid_version"
        /// A header name is empty or not a token, or the colon is missing.
        case invalidHeaderName = "invalid_header_name"
        /// Whitespace between a header name and its colon.
        case whitespaceBeforeColon = "whitespace_before_colon"
        /// A NUL, bare CR or other control character in the head.
        case controlCharacter = "control_character"
        /// A header line starting with whitespace (obs-fold).
        case obsoleteLineFolding = "obs_fold"
        /// The head is larger than the limit.
        case headTooLarge = "head_too_large"
        /// More header lines than the limit.
        case tooManyHeaders = "too_many_headers"
        /// Host is missing (HTTP/1.1), duplicated, or malformed.
        case invalidHost = "invalid_host"
        /// Content-Length is malformed, duplicated or disagrees with itself.
        case invalidContentLength = "invalid_content_length"
        /// Both Transfer-Encoding and Content-Length.
        case contentLengthWithTransferEncoding = "content_length_with_transfer_encoding"
        /// Transfer-Encoding other than exactly `chunked`, or on an HTTP/1.0 message.
        case unsupportedTransferEncoding = "unsupported_transfer_encoding"
        /// A chunk size line is malformed or too large.
        case invalidChunkSize = "invalid_chunk_size"
        /// A chunk extension is malformed or too long.
        case invalidChunkExtension = "invalid_chunk_extension"
        /// The CRLF after chunk data is missing.
        case invalidChunkTerminator = "invalid_chunk_terminator"
        /// The trailer section is malformed or too large.
        case invalidTrailer = "invalid_trailer"
        /// A request-head line ends in LF without CR.
        case bareLineFeed = "bare_lf"
        /// More than one Content-Type field in a request.
        case duplicateContentType = "duplicate_content_type"
        /// A `%` not followed by two hex digits, or one that decodes to a control character.
        case invalidPercentEncoding = "invalid_percent_encoding"
        /// `%2F` or `%5C` in the path: upstreams disagree on whether it separates segments.
        case encodedSeparator = "encoded_separator"
        /// A `..` segment that would climb above the root.
        case targetAboveRoot = "target_above_root"
        /// The status code is not three digits.
        case invalidStatus = "invalid_status"
    }

    /// What is wrong.
    public var reason: Reason
    /// Offset within the head or body where it was seen.
    public var offset: Int

    /// Creates an error.
    public init(_ reason: Reason, at offset: Int = 0) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "http: \(reason.rawValue) at byte \(offset)" }
}
