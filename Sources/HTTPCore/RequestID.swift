/// A request's id as the proxy forwards it (`X-Request-Id`) and logs it: the client's own
/// value when it sent a usable one, else 128 random bits as 32 lower-case hex digits (the
/// digits `Hex.appendRandom(words: 2, …)` writes).
///
/// Neither kind costs an allocation: random ids are two words written as digits only where
/// they are serialized (`append(to:)`), a client's id is a slice of the buffer its head was
/// parsed from. `description` makes a `String`, for log lines.
public struct RequestID: Equatable, Sendable, CustomStringConvertible {
    private enum Storage: Equatable, Sendable {
        case random(UInt64, UInt64)
        case client(ArraySlice<UInt8>)
    }

    private let storage: Storage

    /// A fresh random id.
    public init(using generator: inout some RandomNumberGenerator) {
        storage = .random(generator.next(), generator.next())
    }

    /// The client's id, or `nil` when the value is empty or longer than `maximumBytes`.
    public init?(client value: ArraySlice<UInt8>, maximumBytes: Int = 200) {
        guard !value.isEmpty, value.count <= maximumBytes else { return nil }
        storage = .client(value)
    }

    /// The number of bytes `append(to:)` writes.
    public var byteCount: Int {
        switch storage {
        case .random: 32
        case .client(let bytes): bytes.count
        }
    }

    /// Appends the id's bytes (a header value, as is).
    public func append(to out: inout [UInt8]) {
        switch storage {
        case .random(let first, let second):
            Self.appendDigits(of: first, to: &out)
            Self.appendDigits(of: second, to: &out)
        case .client(let bytes):
            out.append(contentsOf: bytes)
        }
    }

    /// 16 hex digits, low nibble first, as `Hex.appendRandom` writes a word.
    private static func appendDigits(of word: UInt64, to out: inout [UInt8]) {
        var rest = word
        for _ in 0..<16 {
            out.append(Hex.digits[Int(rest & 15)])
            rest >>= 4
        }
    }

    /// The id's bytes in a new array.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(byteCount)
        append(to: &out)
        return out
    }

    /// The id as text (a client's bytes decoded as UTF-8, invalid sequences as U+FFFD).
    public var description: String { String(decoding: bytes, as: UTF8.self) }
}
