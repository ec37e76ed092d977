/// Why tracing could not start (the exporter's thread could not be created).
public struct TracingError: Error, Hashable, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
