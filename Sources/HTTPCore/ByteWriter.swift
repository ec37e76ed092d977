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
        let count = bytes.count
        precondition(end - next >= count, "ByteWriter: past the reserved bytes")
        if count <= 16 {
            Self.copySmall(UnsafeRawPointer(base), to: UnsafeMutableRawPointer(next), count: count)
        } else {
            next.update(from: base, count: count)
        }
        next += count
    }

    /// Copies at most 16 bytes with two (overlapping) loads and stores of a word: the pieces of
    /// a head (`\r\n`, `; name=`, a short name) cost less than a call to `memmove`. Both words
    /// are loaded before either is stored.
    @inlinable @inline(__always)
    static func copySmall(_ source: UnsafeRawPointer, to target: UnsafeMutableRawPointer, count: Int) {
        if count >= 8 {
            let head = source.loadUnaligned(as: UInt64.self)
            let tail = source.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            target.storeBytes(of: head, as: UInt64.self)
            target.storeBytes(of: tail, toByteOffset: count - 8, as: UInt64.self)
        } else if count >= 4 {
            let head = source.loadUnaligned(as: UInt32.self)
            let tail = source.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            target.storeBytes(of: head, as: UInt32.self)
            target.storeBytes(of: tail, toByteOffset: count - 4, as: UInt32.self)
        } else {
            var index = 0
            while index < count {
                target.storeBytes(
                    of: source.load(fromByteOffset: index, as: UInt8.self), toByteOffset: index,
                    as: UInt8.self)
                index += 1
            }
        }
    }

    /// Appends a raw buffer's bytes.
    @inlinable
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        precondition(end - next >= count, "ByteWriter: past the reserved bytes")
        if count <= 16 {
            Self.copySmall(base, to: UnsafeMutableRawPointer(next), count: count)
        } else {
            UnsafeMutableRawPointer(next).copyMemory(from: base, byteCount: count)
        }
        next += count
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
