public import HTTPCore

/// Irregularities the parser repaired: each is accepted because it is unambiguous, and each
/// is reported so the access log and metrics can show who sends what. A route's
/// `MultipartPolicy` may refuse any of them instead (`anomalies: { FLAG: reject }`).
///
/// The families follow ModSecurity's `MULTIPART_*` flags.
public struct MultipartAnomalies: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Bytes before the first delimiter (a preamble, or a leading CRLF).
    public static let dataBefore = MultipartAnomalies(rawValue: 1 << 0)
    /// Bytes after the closing delimiter's line (an epilogue).
    public static let dataAfter = MultipartAnomalies(rawValue: 1 << 1)
    /// Lines end with bare LF throughout (IE7 and hand-written bodies).
    public static let lfLineEndings = MultipartAnomalies(rawValue: 1 << 2)
    /// A `Content-Disposition` parameter without quotes.
    public static let unquotedParameter = MultipartAnomalies(rawValue: 1 << 3)
    /// A file name given as RFC 8187 `filename*`.
    public static let extendedFilename = MultipartAnomalies(rawValue: 1 << 4)
    /// The body ends right after `--boundary--`, with no final line break.
    public static let missingFinalLineBreak = MultipartAnomalies(rawValue: 1 << 5)
    /// Spaces or tabs after a delimiter (RFC 2046 transport padding).
    public static let transportPadding = MultipartAnomalies(rawValue: 1 << 6)
    /// `Content-Type` written inside `Content-Disposition` after a `;`.
    public static let inlineContentType = MultipartAnomalies(rawValue: 1 << 7)
    /// A part carries `Content-Transfer-Encoding` (deprecated by RFC 7578).
    public static let contentTransferEncoding = MultipartAnomalies(rawValue: 1 << 8)
    /// Part data contains the delimiter followed by a byte that makes it data, not a delimiter.
    public static let boundaryLookalike = MultipartAnomalies(rawValue: 1 << 9)
    /// A part header without a space after the colon (`Name:value`).
    public static let headerWithoutSpace = MultipartAnomalies(rawValue: 1 << 10)
    /// A bare token after a `;` in `Content-Disposition`, ignored.
    public static let dispositionJunk = MultipartAnomalies(rawValue: 1 << 11)
    /// A part header other than `Content-Disposition`, `Content-Type` and
    /// `Content-Transfer-Encoding` that the route does not keep: dropped (RFC 7578 §4.8).
    public static let extraPartHeader = MultipartAnomalies(rawValue: 1 << 12)
    /// A part's `Content-Type` does not parse: forwarded as the sniffed type or
    /// `application/octet-stream`, the declared value kept in the log.
    public static let invalidPartContentType = MultipartAnomalies(rawValue: 1 << 13)
    /// The request's `Content-Type` separates its parameters with `,` instead of `;`
    /// (`multipart/form-data, boundary=…`, as RFC 1867 §6 writes it).
    public static let commaSeparatedParameters = MultipartAnomalies(rawValue: 1 << 14)
    /// In a CRLF body, a delimiter after a bare LF: part content, since RFC 2046's delimiter
    /// is CRLF `--boundary`.
    public static let bareLFDelimiter = MultipartAnomalies(rawValue: 1 << 15)

    private static let names: [(MultipartAnomalies, String)] = [
        (.dataBefore, "data_before"), (.dataAfter, "data_after"), (.lfLineEndings, "lf_line_endings"),
        (.unquotedParameter, "unquoted_parameter"), (.extendedFilename, "extended_filename"),
        (.missingFinalLineBreak, "missing_final_line_break"), (.transportPadding, "transport_padding"),
        (.inlineContentType, "inline_content_type"), (.contentTransferEncoding, "content_transfer_encoding"),
        (.boundaryLookalike, "boundary_lookalike"), (.headerWithoutSpace, "header_without_space"),
        (.dispositionJunk, "disposition_junk"), (.extraPartHeader, "extra_part_header"),
        (.invalidPartContentType, "invalid_part_content_type"),
        (.commaSeparatedParameters, "comma_separated_parameters"), (.bareLFDelimiter, "bare_lf_delimiter"),
    ]

    /// Every flag's snake_case name, in bit order (for configuration errors and docs).
    public static var allNames: [String] { names.map(\.1) }

    /// Stable snake_case names, as written to the access log and metric labels.
    public var names: [String] {
        Self.names.filter { contains($0.0) }.map(\.1)
    }

    /// Looks up a flag by its snake_case name.
    public init?(name: String) {
        guard let entry = Self.names.first(where: { $0.1 == name }) else { return nil }
        self = entry.0
    }

    public var description: String { "[" + names.joined(separator: ", ") + "]" }
}

extension MultipartAnomalies {
    /// The flags of a request's `Content-Type`, parsed with `MediaType.parse(_:accepting:)`.
    public init(requestContentType type: MediaType) {
        self = type.anomalies.contains(.commaSeparatedParameters) ? .commaSeparatedParameters : []
    }
}
