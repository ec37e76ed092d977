public import UploadRules

/// What the rules of one loop thread share: its sniffer (libmagic is not thread-safe) and its
/// hashing queue (large parts are hashed off the loop; `nil`: every part is hashed inline).
public struct RuleTools: Sendable {
    /// The loop's libmagic sniffer.
    public var sniffer: Sniffer?
    /// The loop's share of the hashing threads.
    public var hashing: DigestQueue?

    /// Tools for one loop thread.
    public init(sniffer: Sniffer? = nil, hashing: DigestQueue? = nil) {
        self.sniffer = sniffer
        self.hashing = hashing
    }
}
