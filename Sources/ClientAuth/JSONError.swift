/// A JSON document `JSONParser` refused: what is wrong and at which byte.
public struct JSONError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public enum Reason: String, Equatable, Sendable {
        /// The document is larger than the parser's size limit.
        case tooLarge = "too large"
        /// Arrays and objects nest deeper than the parser's depth limit.
        case tooDeep = "nested too deep"
        /// The document ended inside a value.
        case unexpectedEnd = "unexpected end"
        /// A byte that cannot start or continue a value here.
        case unexpectedByte = "unexpected byte"
        /// Bytes follow the top-level value.
        case trailingBytes = "bytes after the value"
        /// A number that does not follow the grammar (leading zeros, `1.`, `.5`, `+1`, `1e`).
        case invalidNumber = "invalid number"
        /// A control character (U+0000 to U+001F) unescaped inside a string.
        case controlCharacter = "control character in a string"
        /// A backslash escape that is not one of `\" \\ \/ \b \f \n \r \t \uXXXX`.
        case invalidEscape = "invalid escape"
        /// A `\uXXXX` surrogate that is not half of a high-low pair.
        case unpairedSurrogate = "unpaired surrogate"
        /// String bytes that are not UTF-8.
        case invalidUTF8 = "invalid UTF-8"
        /// An object names the same member twice.
        case duplicateName = "duplicate member name"
    }

    /// What is wrong.
    public var reason: Reason
    /// The byte offset in the document where the problem was found.
    public var offset: Int

    /// Creates an error at `offset`.
    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "\(reason.rawValue) at byte \(offset)" }
}
