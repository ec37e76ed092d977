public import EventLoop
public import HTTP1
public import HTTPCore

extension EvBuffer: ByteSink {
    /// Appends a copy of `bytes` (an `evbuffer_add`).
    public func write(_ bytes: UnsafeRawBufferPointer) {
        add(bytes)
    }
}

/// An owned buffer as a sink that keeps it alive (an HTTP/2 session delivering a stream's
/// DATA straight into it).
extension OwnedEvBuffer: ByteSink {
    /// Appends a copy of `bytes` (an `evbuffer_add`).
    public func write(_ bytes: UnsafeRawBufferPointer) {
        buffer.add(bytes)
    }
}

/// The head scanner and body decoder read an `evbuffer` through `ByteSource`'s
/// `takeHead` and `decodeBody`.
extension EvBuffer: ByteSource {}

/// A buffer as the sink an HTTP/2 session writes a stream's DATA into while the socket's read
/// is fed through `reads`: large pieces by reference into that read, the rest copied. Keeps
/// the buffer alive.
public struct PinnedReadSink: ByteSink {
    let target: OwnedEvBuffer
    let reads: PinnedReads

    /// A sink appending to `target`.
    public init(_ target: OwnedEvBuffer, reads: PinnedReads) {
        self.target = target
        self.reads = reads
    }

    /// Appends `bytes` to the buffer (`PinnedReads.append`).
    public func write(_ bytes: UnsafeRawBufferPointer) {
        reads.append(bytes, to: target.buffer)
    }
}
