/// A configuration problem with its place: `FILE:LINE:COL: key.path: message`.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    public var line: Int
    public var column: Int
    /// The key path (`routes[0].match.path`), empty for syntax errors.
    public var keyPath: String
    public var message: String

    public init(file: String, line: Int, column: Int, keyPath: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.keyPath = keyPath
        self.message = message
    }

    public var description: String {
        "\(file):\(line):\(column): \(keyPath.isEmpty ? "" : keyPath + ": ")\(message)"
    }
}

/// Every problem found in one configuration file.
public struct ConfigErrors: Error, Sendable, Equatable, CustomStringConvertible {
    public var errors: [ConfigError]

    public init(_ errors: [ConfigError]) {
        self.errors = errors
    }

    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
