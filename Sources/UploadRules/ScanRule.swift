import HTTPCore
public import Inspection

/// `scan:` — each file part of matching type streams to a clamd scanner while it streams
/// upstream (`FileInspection`); the shell's `InspectionStreams` open the connections.
public final class ScanRule: FileInspection {
    /// What a scanner failure (or an oversize file) does.
    public enum Policy: String, Sendable {
        /// The request is refused (503 for a failure, 413 for an oversize file).
        case reject
        /// The file passes, logged `error` (a failure) or `skipped` (unscanned, oversize).
        case allow
    }

    /// The scanner (`scanners.clamd.NAME`).
    public let scanner: ClamdSettings
    /// `types`: `type/subtype` or `type/*` patterns of the parts scanned (`*/*`: every file).
    public let types: [String]
    /// `on_error`.
    public let onError: Policy
    /// `oversize`: a file over the scanner's `max_bytes`.
    public let oversize: Policy

    public init(
        scanner: ClamdSettings, types: [String] = ["*/*"], onError: Policy = .reject,
        oversize: Policy = .reject
    ) {
        self.scanner = scanner
        self.types = types
        self.onError = onError
        self.oversize = oversize
    }

    /// Judged on the sniffed type when the route sniffs (a declared type is the client's word).
    public func inspects(_ part: PartLogRecord) -> Bool {
        if types.contains("*/*") { return true }
        let type =
            (try? MediaType.parse(part.sniffedType ?? part.contentType ?? "application/octet-stream"))
            ?? MediaType(type: "application", subtype: "octet-stream")
        return types.contains { type.matches($0) }
    }

    /// The scanner's own timeout, and a second for its answer to arrive.
    public var timeoutMilliseconds: Int64 { scanner.timeoutMilliseconds + 1_000 }
}
