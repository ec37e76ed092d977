public import HTTP1

/// An empty byte source, for events that come with no input (a connection never made).
public struct NoBytes: ByteSource {
    /// The empty source.
    public init() {}

    public var count: Int { 0 }

    public func forEachChunk(limit: Int, _ body: (UnsafeRawBufferPointer) -> Bool) {}

    public func drain(_ count: Int) {}

    public func remove(_ count: Int) -> [UInt8] { [] }
}
