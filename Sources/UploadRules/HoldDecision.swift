/// What a verdict decides about a hold.
public enum HoldDecision: Sendable {
    /// The held output may go on (once the holds before it are released too).
    case release
    /// The request is refused: the held output is discarded and `refusal` is set.
    case refuse(RuleRefusal)
}
