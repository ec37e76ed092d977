/// A rule step that judges a file's content from outside FormGate, asynchronously (a virus
/// scanner, a content classifier). The file's bytes stream into an `InspectionStream` as they
/// are forwarded; the pipeline holds back the final byte of each file the step inspects, and
/// everything it writes after it, behind a hold until the verdict (`RulePipeline.decide`): the
/// upstream never holds a whole file, nor a whole body, that was not judged. A refusal
/// discards what is held, so the upstream's copy stays incomplete.
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
    /// How long the request waits at most for a verdict once the file ended (then 503): a
    /// backstop behind the stream's own timeouts.
    var timeoutMilliseconds: Int64 { get }
}

/// One inspected file on its way to the inspector (a connection to clamd), fed on the loop
/// thread as the file streams. It never blocks: bytes it cannot send yet are queued, and
/// `wantsPause` asks the caller to stop reading its client meanwhile (the loop's progress
/// signal follows when it may read again, or when `earlyDecision` appears).
///
/// Sendable only to travel in the proxy's actions: it is used on its loop thread alone.
public protocol InspectionStream: AnyObject, Sendable {
    /// The file's next bytes, as the client sent them.
    func update(_ bytes: UnsafeRawBufferPointer)
    /// The file ended: the verdict follows (`whenDecided`).
    func end()
    /// Whether the caller should stop reading its client: bytes for the inspector back up,
    /// or the stream waits for a connection.
    var wantsPause: Bool { get }
    /// A decision reached before the verdict: `.refuse` ends the request now (the inspector
    /// failed and failures refuse, or the file passed `max_bytes` and oversize files are
    /// refused); `.release` lets the file go without a hold (it passes unscanned: failures or
    /// oversize files are allowed).
    var earlyDecision: HoldDecision? { get }
    /// What the access log says of the file (`clean`, `infected:<signature>`, `error`,
    /// `skipped`), once known.
    var logValue: String? { get }
    /// Calls `body` once, on the loop thread, with the verdict (nil: none could be had, which
    /// is refused as a failure). Called at once when it is known; never again after the
    /// stream is dropped.
    func whenDecided(_ body: @escaping (HoldDecision?) -> Void)
}

/// A loop thread's means of inspecting files (its connection pools).
public protocol InspectionStreams: AnyObject, Sendable {
    /// A stream for the file part `part`, which `inspection` inspects.
    func open(_ inspection: any FileInspection, part: PartLogRecord) -> any InspectionStream
}

/// An inspected file ended: its verdict is wanted for `hold`. The pipeline hands these out
/// with `takeVerdictRequests()`.
public struct FileVerdictRequest: Sendable {
    /// The hold the verdict releases or refuses.
    public var hold: HoldID
    /// The part's index among the pipeline's `records`.
    public var part: Int
    /// Where the verdict comes from (nil: the loop has no means of inspecting, a failure).
    public var stream: (any InspectionStream)?

    public init(hold: HoldID, part: Int, stream: (any InspectionStream)? = nil) {
        self.hold = hold
        self.part = part
        self.stream = stream
    }
}
