public import HTTPCore

/// Why a multipart body was refused, and the byte offset in the body where it was seen.
///
/// Every reason is a form the upstream could read differently from FormGate, a limit, or a
/// flag the route's policy refuses; the proxy answers 400 (or 413 for `limitExceeded`) and
/// never sends the upstream a complete body.
public struct MultipartError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A configurable limit that was exceeded.
    public enum Limit: String, Equatable, Sendable {
        case parts, fields, files
        case partHeaderBytes = "part_header_bytes"
        case headersPerPart = "headers_per_part"
        case fieldBytes = "field_bytes"
        case fileBytes = "file_bytes"
    }

    /// What is wrong.
    public enum Reason: Equatable, Sendable {
        /// The boundary is empty, longer than 70, or outside the RFC 2046 characters.
        case invalidBoundary
        /// A line before the first delimiter starts with `--` but is not our delimiter: the
        /// body was written for another boundary, or hides a second one.
        case foreignDelimiter
        /// Delimiter or header lines mix CRLF and bare LF.
        case mixedLineEndings
        /// Something other than whitespace and a line break follows a delimiter.
        case junkAfterDelimiter
        /// A CR, LF, NUL or other control character inside a part header.
        case controlCharacterInHeader
        /// A header line starts with whitespace after another header (obs-fold).
        case headerFolding
        /// The first header line of a part starts with whitespace.
        case leadingWhitespace
        /// A header name is empty or not a token, or the colon is missing.
        case invalidHeaderName
        /// Whitespace between a header name and its colon.
        case whitespaceBeforeColon
        /// A part has no `Content-Disposition`.
        case missingContentDisposition
        /// A header that must be unique appears twice (`Content-Disposition`, …).
        case duplicateHeader(String)
        /// `Content-Disposition` cannot be read.
        case invalidContentDisposition(HTTPCoreError.Reason)
        /// The disposition type is not `form-data`.
        case unsupportedDispositionType
        /// `Content-Disposition` has no `name`.
        case missingName
        /// The input ended before the closing delimiter.
        case unexpectedEnd
        /// A limit was exceeded.
        case limitExceeded(Limit)
        /// The route's `MultipartPolicy` refuses this anomaly flag (`anomalies: { FLAG: reject }`).
        case rejectedAnomaly(MultipartAnomalies)
    }

    /// What is wrong.
    public var reason: Reason
    /// Offset in the multipart body (0 = first body byte) where the problem was detected.
    public var offset: Int64

    /// Creates an error.
    public init(_ reason: Reason, at offset: Int64) {
        self.reason = reason
        self.offset = offset
    }

    /// True when the error is a limit (HTTP 413) rather than malformed input (HTTP 400).
    public var isLimit: Bool {
        if case .limitExceeded = reason { return true }
        return false
    }

    public var description: String {
        "multipart: \(reason) at byte \(offset)"
    }
}
