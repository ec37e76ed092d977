public import EventLoop
public import HTTP1
public import HTTPCore

extension EvBuffer: ByteSink {
    /// Appends a copy of `bytes` (an `evbuffer_add`).
    public func write(_ bytes: UnsafeRawBufferPointer) {
        add(bytes)
    }
}

/// The head scanner and body decoder read an `evbuffer` through `ByteSource`'s
/// `takeHead` and `decodeBody`.
extension EvBuffer: ByteSource {}
