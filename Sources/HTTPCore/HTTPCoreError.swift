/// A header value that could not be parsed: what is wrong and where.
public struct HTTPCoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, in a form the proxy can map to a status code.
    public enum Reason: Equatable, Sendable {
        /// The value is empty where something is required.
        case empty
        /// A type or subtype is missing or not a token.
        case invalidMediaType
        /// A parameter name is not a token, or `=` is missing.
        case invalidParameter
        /// A quoted string is not closed.
        case unterminatedQuotedString
        /// Characters follow a value (quoted or not) before the next `;`.
        case junkAfterValue
        /// A parameter appears twice (`name`, `filename`, `boundary`, …).
        case duplicateParameter(String)
        /// A control character (NUL, CR, LF, …) inside a value.
        case controlCharacter
        /// An RFC 5987 extended value (`filename*`) is malformed or uses an unknown charset.
        case invalidExtendedValue
        /// `filename*` and `filename` are both present and name different files.
        case filenameMismatch
        /// The boundary parameter is empty, too long or uses characters outside RFC 2046.
        case invalidBoundary
    }

    /// What is wrong.
    public var reason: Reason
    /// Byte offset within the value where the problem was found.
    public var offset: Int

    /// Creates an error at `offset`.
    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String {
        "\(reason) at byte \(offset)"
    }
}
