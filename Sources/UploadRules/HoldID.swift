/// Names one hold of a `RulePipeline`: a point in its output behind which nothing is emitted
/// until the hold is released (a digest being computed, later an asynchronous verdict).
public struct HoldID: Hashable, Sendable, CustomStringConvertible {
    /// Unique within one pipeline, increasing in output order.
    public let rawValue: Int

    /// Wraps a pipeline's hold number.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    public var description: String { "hold \(rawValue)" }
}
