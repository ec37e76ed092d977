/// Writes bytes into memory the caller reserved, without a bounds or uniqueness check per
/// append: for heads built many times per request (a multipart part's head), where
/// `Array.append` spent more on its checks than on the bytes.
///
/// The caller reserves at least as many bytes as it writes (`MultipartEncoder` reserves an
/// upper bound of the head it builds); writing past the end traps.
public struct ByteWriter {
    /// Where the next byte goes.
    @usableFromInline var next: UnsafeMutablePointer<UInt8>
    /// One past the reserved memory.
    @usableFromInline let end: UnsafeMutablePointer<UInt8>
    /// The first byte.
    public let start: UnsafeMutablePointer<UInt8>

    /// A writer over `buffer`.
    @inlinable
    public init(_ buffer: UnsafeMutableBufferPointer<UInt8>) {
        start = buffer.baseAddress!
        next = start
        end = start + buffer.count
    }

    /// The bytes written so far.
    @inlinable
    public var written: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: next - start) }

    /// Appends one byte.
    @inlinable
    public mutating func append(_ byte: UInt8) {
        precondition(next < end, "ByteWriter: past the reserved bytes")
        next.pointee = byte
        next += 1
    }

    /// Appends a buffer's bytes.
    @inlinable
    public mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        precondition(end - next >= bytes.count, "ByteWriter: past the reserved bytes")
        next.update(from: base, count: bytes.count)
        next += bytes.count
    }

    /// Appends a raw buffer's bytes.
    @inlinable
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        precondition(end - next >= bytes.count, "ByteWriter: past the reserved bytes")
        UnsafeMutableRawPointer(next).copyMemory(from: base, byteCount: bytes.count)
        next += bytes.count
    }

    /// Appends a literal's bytes.
    @inlinable
    public mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends an array's bytes.
    @inlinable
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }
}
