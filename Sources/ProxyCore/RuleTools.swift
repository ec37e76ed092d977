public import UploadRules

/// What the rules of one loop thread share: its sniffer (libmagic is not thread-safe), its
/// hashing queue (large parts are hashed off the loop; `nil`: every part is hashed inline) and
/// its scanner connections.
public struct RuleTools: Sendable {
    /// The loop's libmagic sniffer.
    public var sniffer: Sniffer?
    /// The loop's share of the hashing threads.
    public var hashing: DigestQueue?
    /// The loop's connections to the scanners (`scan:`).
    public var inspectors: (any InspectionStreams)?

    /// Tools for one loop thread.
    public init(
        sniffer: Sniffer? = nil, hashing: DigestQueue? = nil, inspectors: (any InspectionStreams)? = nil
    ) {
        self.sniffer = sniffer
        self.hashing = hashing
        self.inspectors = inspectors
    }
}
