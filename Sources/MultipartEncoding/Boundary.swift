public import HTTPCore

/// A multipart boundary: 1 to 70 RFC 2046 characters.
public struct Boundary: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The boundary bytes, without the leading `--`.
    public let bytes: [UInt8]

    /// Wraps a boundary, validating it against RFC 2046 §5.1.1.
    public init(_ bytes: [UInt8]) throws(HTTPCoreError) {
        try MediaType.validateBoundary(bytes)
        self.bytes = bytes
    }

    /// Wraps a boundary given as a string.
    public init(_ string: String) throws(HTTPCoreError) {
        try self.init(Array(string.utf8))
    }

    /// A fresh boundary: `----FormGate` followed by 32 hex digits (128 random bits).
    ///
    /// The default generator is the system's cryptographically secure one (`getrandom(2)` on
    /// Linux), so a client cannot predict the boundary and plant it in its content.
    public static func random() -> Boundary {
        random(reusing: [])
    }

    /// A fresh boundary from `generator` (inject a seeded one in tests).
    public static func random(using generator: inout some RandomNumberGenerator) -> Boundary {
        random(using: &generator, reusing: [])
    }

    /// A fresh boundary written into `storage` (an earlier boundary's `bytes`, kept from one
    /// body to the next: without another reference, no allocation).
    public static func random(reusing storage: consuming [UInt8]) -> Boundary {
        var generator = SecureRandom()
        return random(using: &generator, reusing: storage)
    }

    static func random(using generator: inout some RandomNumberGenerator, reusing storage: consuming [UInt8])
        -> Boundary
    {
        var bytes = storage
        bytes.removeAll(keepingCapacity: true)
        bytes.reserveCapacity(44)
        bytes.append(contentsOf: "----FormGate".utf8)
        Hex.appendRandom(words: 2, to: &bytes, using: &generator)
        return Boundary(unchecked: bytes)
    }

    private init(unchecked bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The boundary as a string.
    public var description: String { String(decoding: bytes, as: UTF8.self) }
}
