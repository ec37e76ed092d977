/// A destination for bytes: an `evbuffer`, a temp file, an array, a hash.
///
/// Encoders write into `inout some ByteSink`, so the hot path dispatches statically.
/// The bytes passed to `write(_:)` are borrowed: they are valid only during the call,
/// and a sink that keeps them must copy them.
public protocol ByteSink {
    /// Appends `bytes`; they are valid only for the duration of the call.
    mutating func write(_ bytes: UnsafeRawBufferPointer)

    /// Appends `bytes` as `write(_:)` does and, when the sink forwards them by reference
    /// rather than copying them (they lie in a lent input, `InputLoan`), shares them with
    /// `reader`: returns `true`, and once the bytes are pinned, on this thread, calls
    /// `reader.attach` with where they lie. `false`: they were copied, `reader` hears nothing.
    mutating func write(_ bytes: UnsafeRawBufferPointer, sharingWith reader: any SharedBytesReader) -> Bool
}

/// Reads bytes a sink forwarded by reference (`ByteSink.write(_:sharingWith:)`) later, and
/// possibly on another thread: a large file's digest on the hashing threads.
public protocol SharedBytesReader: AnyObject, Sendable {
    /// The shared bytes are pinned: `regions`, in order, stay valid and unchanged until
    /// `release` is called, which must be on the thread that called `attach` (the loop's;
    /// the pinned chains are libevent's, whose reference counts are not atomic).
    func attach(_ regions: [UnsafeRawBufferPointer], release: @escaping () -> Void)
}

extension ByteSink {
    /// Copies: nothing is shared.
    @inlinable
    public mutating func write(_ bytes: UnsafeRawBufferPointer, sharingWith reader: any SharedBytesReader)
        -> Bool
    {
        write(bytes)
        return false
    }

    /// Appends the bytes of an array.
    @inlinable
    public mutating func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Appends the bytes of an array slice.
    @inlinable
    public mutating func write(_ bytes: ArraySlice<UInt8>) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Appends the UTF-8 bytes of a static string (literal framing such as `"\r\n"`).
    @inlinable
    public mutating func write(_ literal: StaticString) {
        write(UnsafeRawBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }
}

/// A sink that appends to a growable byte array; for tests, small bodies and builders.
public struct ByteArraySink: ByteSink, Sendable {
    /// Everything written so far.
    public var bytes: [UInt8]

    /// Creates an empty sink, optionally reserving `capacity` bytes.
    public init(capacity: Int = 0) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    @inlinable
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {
        self.bytes.append(contentsOf: bytes)
    }
}

/// A sink that only counts: used to compute exact `Content-Length` values before writing.
public struct CountingSink: ByteSink, Sendable {
    /// The number of bytes written so far.
    public var count: Int64 = 0

    /// Creates a sink whose count is zero.
    public init() {}

    @inlinable
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {
        count += Int64(bytes.count)
    }
}
