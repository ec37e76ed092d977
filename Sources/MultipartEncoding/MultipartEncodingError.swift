/// Why the encoder or the form builder could not write a body.
public struct MultipartEncodingError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Equatable, Sendable {
        /// A header name is not a token, or a value holds CR, LF, NUL or another control.
        case invalidHeader(String)
        /// A part was begun before the previous one, or after `finish`.
        case outOfOrder
        /// A file could not be opened or read (`errno`).
        case io(path: String, errno: Int32)
        /// A file's size changed between `addFile` and `write`; the announced length would lie.
        case fileChanged(path: String)
    }

    /// What went wrong.
    public var reason: Reason

    /// Creates an error.
    public init(_ reason: Reason) {
        self.reason = reason
    }

    public var description: String { "multipart encoding: \(reason)" }
}
