/// A Redis reply (RESP2): what a command answers.
public enum RESPValue: Sendable, Equatable {
    /// `+OK`
    case simple(String)
    /// `-ERR message` (the error's text, first word included).
    case error(String)
    /// `:42`
    case integer(Int64)
    /// `$n` bytes, or `$-1` (nil).
    case bulk([UInt8]?)
    /// `*n` values, or `*-1` (nil).
    case array([RESPValue]?)
}

/// Why a reply could not be read: the connection it came on cannot be trusted any more.
public struct RESPError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        /// A type byte RESP2 does not have.
        case unknownType = "unknown reply type"
        /// A length or integer that is not a decimal number in range.
        case badNumber = "bad number"
        /// A line not ended by CRLF, or a bulk string not followed by one.
        case badLineEnd = "bad line end"
        /// Over `RESPLimits`.
        case tooLarge = "reply too large"
        /// Arrays nested deeper than `RESPLimits.depth`.
        case tooDeep = "reply nested too deep"
    }

    public var reason: Reason
    /// The byte offset in the connection's input where it was found.
    public var offset: Int64

    public init(_ reason: Reason, at offset: Int64) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "\(reason.rawValue) at byte \(offset)" }
}

/// Bounds on one reply, whatever the server sends: a hostile or broken Redis cannot make the
/// reader hold more than this.
public struct RESPLimits: Sendable, Equatable {
    /// The longest simple string, error or number line.
    public var line = 4096
    /// The longest bulk string.
    public var bulk = 1 << 20
    /// The most values in one array (all levels together).
    public var elements = 1024
    /// The deepest nesting of arrays.
    public var depth = 4
    /// The most bytes one reply takes, all its values together (without it, 1,024 bulk strings
    /// of a MiB each would be a GiB held for one reply).
    public var reply = 4 << 20

    public init(
        line: Int = 4096, bulk: Int = 1 << 20, elements: Int = 1024, depth: Int = 4, reply: Int = 4 << 20
    ) {
        self.line = line
        self.bulk = bulk
        self.elements = elements
        self.depth = depth
        self.reply = reply
    }
}
