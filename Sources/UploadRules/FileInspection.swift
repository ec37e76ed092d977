/// A rule step that judges a file's content from outside FormGate, asynchronously (a virus
/// scanner, a content classifier). The pipeline holds back the final byte of each file the
/// step inspects, and everything it writes after it, behind a hold until the verdict
/// (`RulePipeline.decide`): the upstream never holds a whole file, nor a whole body, that was
/// not judged. A refusal discards what is held, so the upstream's copy stays incomplete.
///
/// The generalisation of the digest hold (`RulePipeline+Holds`): a digest hold is released
/// when the hashing threads finish, an inspection hold when its verdict arrives.
///
/// Class-bound: the rules (and so every exchange on the route) hold it as one reference, not as
/// an opaque existential whose copies the optimizer cannot remove.
public protocol FileInspection: AnyObject, Sendable {
    /// Whether the file part `part` (as forwarded: its name, filename and content type) is
    /// inspected.
    func inspects(_ part: PartLogRecord) -> Bool
    /// How long the request waits for a verdict once the file ended (then 503).
    var timeoutMilliseconds: Int64 { get }
}

/// An inspected file ended: its verdict is wanted for `hold`. The pipeline hands these out
/// with `takeVerdictRequests()`.
public struct FileVerdictRequest: Sendable, Equatable {
    /// The hold the verdict releases or refuses.
    public var hold: HoldID
    /// The part's index among the pipeline's `records`.
    public var part: Int

    public init(hold: HoldID, part: Int) {
        self.hold = hold
        self.part = part
    }
}
