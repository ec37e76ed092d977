#if canImport(Glibc)
    import Glibc
#endif

/// Why libevent, OpenSSL or the kernel could not do something: which call failed and, where
/// known, the system error.
public struct EventLoopError: Error, CustomStringConvertible, Sendable {
    /// The failing call and, where known, the system error.
    public var message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    /// An error naming `call` and the text of `code` (an `errno` value).
    static func system(_ call: String, _ code: Int32) -> EventLoopError {
        EventLoopError("\(call) failed: \(String(cString: strerror(code)))")
    }

    public var description: String { message }
}
