/// A key file `APIKeySet` could not load: what is wrong and on which line (from 1).
public struct APIKeyFileError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong.
    public enum Reason: Equatable, Sendable {
        /// The file cannot be read (or is over 1 MiB).
        case unreadable(String)
        /// A line is not `name: digest`.
        case missingColon
        /// The name is empty, too long, or has characters outside `A-Z a-z 0-9 . _ - @ +`.
        case invalidName
        /// The digest is not 64 hex digits.
        case invalidDigest
        /// The name appeared on an earlier line.
        case duplicateName(String)
        /// The digest appeared on an earlier line (two names for one key).
        case duplicateDigest
        /// The file has no key lines.
        case noKeys
    }

    /// What is wrong.
    public var reason: Reason
    /// The line number (from 1; 0 for the whole file).
    public var line: Int

    /// Creates an error on `line`.
    public init(_ reason: Reason, line: Int) {
        self.reason = reason
        self.line = line
    }

    public var description: String { "line \(line): \(reason)" }
}
