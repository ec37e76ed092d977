/// Why the rules refused a request. Only the proxy maps reasons to HTTP statuses (415 for
/// `typeNotAllowed` and `typeMismatch`, 422 for `fileRefused` and `metadataNotStrippable`, 503 for `inspectionFailed`,
/// 413 for `fileTooLargeToInspect`, 400 for the others).
public struct RuleRefusal: Error, Sendable, CustomStringConvertible {
    /// The rule that refused.
    public enum Reason: Sendable, Hashable {
        /// A client file name that no sanitizing makes safe (`..`, a device name), or a
        /// rendered `filename` template that is not a safe name.
        case unsafeFilename
        /// The part's (sniffed or declared) type matches no `allow_types` pattern.
        case typeNotAllowed
        /// `sniff.content_type: reject_mismatch` and the declared type is not the sniffed one.
        case typeMismatch
        /// A part follows the file on a route whose object store reads only the fields before
        /// it (S3, OSS, COS and Qiniu ignore or refuse them).
        case partAfterFile
        /// The body went on after its file on a route that declared the re-encoded body's
        /// length upstream when the file began (see `RulePipeline.declareLength`).
        case bodyAfterFile
        /// The re-encoded body could not be written (e.g. a header value the encoder refuses).
        case encoding
        /// A file inspection (`FileInspection`) judged a file's content unacceptable.
        case fileRefused
        /// A file inspection could not judge the file (the scanner failed, timed out, refused
        /// the connection, or did not scan all of it) and failures are refused.
        case inspectionFailed
        /// The file is larger than its inspection scans, and such files are refused.
        case fileTooLargeToInspect
        /// `strip_metadata` found metadata it cannot neutralise in the stream (a HEIC whose
        /// `meta` box follows its media data, whose Exif bytes already went on).
        case metadataNotStrippable
    }

    /// The rule that refused.
    public var reason: Reason
    /// A short sentence for the error body and the log (no secret values).
    public var description: String

    /// A refusal for `reason`, described by `description`.
    public init(_ reason: Reason, description: String) {
        self.reason = reason
        self.description = description
    }
}
