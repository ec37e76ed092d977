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
