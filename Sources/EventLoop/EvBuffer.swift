import CLibevent

#if canImport(Glibc)
    import Glibc
#endif

/// A borrowed view of a libevent `evbuffer` (owned by its socket or an `OwnedEvBuffer`).
///
/// The calls below fail only on a frozen buffer (FormGate freezes none) or when memory runs
/// out; adding then stops the process (as any Swift allocation would), the others record the
/// failure in `EventLoopFailures`.
public struct EvBuffer {
    /// The underlying `struct evbuffer *`.
    public let raw: OpaquePointer

    /// Wraps a buffer owned elsewhere.
    public init(_ raw: OpaquePointer) {
        self.raw = raw
    }

    /// Bytes in the buffer.
    public var count: Int { evbuffer_get_length(raw) }

    /// Appends a copy of `bytes`.
    public func add(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let result = evbuffer_add(raw, base, bytes.count)
        precondition(result == 0, "evbuffer_add: out of memory")
    }

    /// Appends a copy of `bytes`.
    public func add(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { add($0) }
    }

    /// Appends a copy of a string's UTF-8 bytes.
    public func add(_ text: String) {
        var text = text
        text.withUTF8 { add(UnsafeRawBufferPointer($0)) }
    }

    /// Removes the first `count` bytes.
    public func drain(_ count: Int) {
        if evbuffer_drain(raw, count) != 0 { EventLoopFailures.record("evbuffer_drain failed") }
    }

    /// Moves the first `count` bytes to the end of `other` without copying data.
    public func move(_ count: Int, to other: EvBuffer) {
        if evbuffer_remove_buffer(raw, other.raw, count) < 0 {
            EventLoopFailures.record("evbuffer_remove_buffer failed")
        }
    }

    /// Moves everything to the end of `other` without copying data.
    public func moveAll(to other: EvBuffer) {
        if evbuffer_add_buffer(other.raw, raw) != 0 { EventLoopFailures.record("evbuffer_add_buffer failed") }
    }

    /// Appends references to every byte of `other` (which keeps them): its chains become
    /// immutable and shared, each freed when both buffers are done with it. Both buffers must
    /// be used and freed on one thread (libevent's reference counts are not atomic). `false`:
    /// `other` holds chains that cannot be shared (already shared, a file segment).
    public func addReferences(to other: EvBuffer) -> Bool {
        evbuffer_add_buffer_reference(raw, other.raw) == 0
    }

    /// Removes and returns the first `count` bytes (with `headSlack` bytes of room after them:
    /// a head taken here is changed in place, the response's `Content-Length` and `Date`, and
    /// an exact fit made the first change reallocate).
    public func remove(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        remove(count, appendingTo: &bytes)
        return bytes
    }

    /// Removes the first `count` bytes, appending them to `buffer`: straight from the chains
    /// into its storage, which has room for `headSlack` bytes more after them (a kept buffer
    /// grows once, then serves every head of its size without an allocation).
    public func remove(_ count: Int, appendingTo buffer: inout [UInt8]) {
        let count = min(count, self.count)
        guard count > 0 else { return }
        let start = buffer.count
        buffer.reserveCapacity(start + count + Self.headSlack)
        buffer.append(contentsOf: repeatElement(0, count: count))
        let removed = buffer.withUnsafeMutableBytes {
            Int(evbuffer_remove(raw, $0.baseAddress! + start, count))
        }
        if removed != count {
            EventLoopFailures.record("evbuffer_remove failed")
            buffer.removeSubrange((start + max(0, removed))...)
        }
    }

    /// Spare capacity `remove(_:)` leaves after the bytes.
    static let headSlack = 128

    /// Calls `body` with the buffer's contiguous chunks in order, up to `limit` bytes, until
    /// it returns `false`. The chunks are valid only during the call and must not be changed.
    public func forEachChunk(limit: Int = .max, _ body: (UnsafeRawBufferPointer) -> Bool) {
        // The vectors live on the stack: an array here was an allocation per call (two or
        // more per request: every head and body read peeks).
        withUnsafeTemporaryAllocation(of: iovec.self, capacity: 16) { vectors in
            vectors.initialize(repeating: iovec())
            var position = evbuffer_ptr()
            var remaining = min(limit, count)
            var first = true
            while remaining > 0 {
                let filled = withUnsafeMutablePointer(to: &position) { position in
                    evbuffer_peek(
                        raw, remaining, first ? nil : position, vectors.baseAddress, Int32(vectors.count))
                }
                guard filled > 0 else { return }
                var seen = 0
                for vector in vectors.prefix(Int(min(filled, 16))) {
                    let length = min(vector.iov_len, remaining - seen)
                    guard length > 0 else { break }
                    if !body(UnsafeRawBufferPointer(start: vector.iov_base, count: length)) { return }
                    seen += length
                }
                remaining -= seen
                if remaining > 0 {
                    let how = first ? EVBUFFER_PTR_SET : EVBUFFER_PTR_ADD
                    first = false
                    guard evbuffer_ptr_set(raw, &position, seen, how) == 0 else {
                        return EventLoopFailures.record("evbuffer_ptr_set failed")
                    }
                }
            }
        }
    }
}

/// An `evbuffer` this object owns (freed on deinit): staging space that no socket owns.
public final class OwnedEvBuffer {
    /// The buffer.
    public let buffer: EvBuffer

    /// Creates an empty buffer.
    public init() {
        guard let raw = evbuffer_new() else { preconditionFailure("evbuffer_new: out of memory") }
        buffer = EvBuffer(raw)
    }

    deinit {
        evbuffer_free(buffer.raw)
    }
}
