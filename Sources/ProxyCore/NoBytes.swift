public import HTTP1

/// An empty byte source, for events that come with no input (a connection never made).
public struct NoBytes: ByteSource {
    /// The empty source.
    public init() {}

    /// Always 0.
    public var count: Int { 0 }

    /// Calls nothing.
    public func forEachChunk(limit: Int, _ body: (UnsafeRawBufferPointer) -> Bool) {}

    /// Drains nothing.
    public func drain(_ count: Int) {}

    /// Returns nothing.
    public func remove(_ count: Int) -> [UInt8] { [] }
}
