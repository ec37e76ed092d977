import HTTP1
public import HTTPCore

/// The shell's writer for request body bytes: the upstream's output, the staging buffer, or
/// a spool file, as `destination` names. The exchange picks the destination; the sink only
/// writes. The spool operations are synchronous file writes in the shell.
public protocol RequestBodySink: ByteSink {
    /// Where `write(_:)` goes.
    var destination: BodyDestination { get set }
    /// Creates the spool (and, with `files`, the file spool) of `request_body: buffer`;
    /// `false` when a temp file cannot be created.
    mutating func openSpools(files: Bool) -> Bool
    /// Writes what the spools buffer; `false` after any write error.
    mutating func flushSpools() -> Bool
    /// Whether a spool write has failed (e.g. ENOSPC).
    var spoolFailed: Bool { get }
}

/// A request body sink seen through the upstream framing: with `chunked`, every write becomes
/// one chunk (`ChunkedEncoder`); otherwise bytes pass as they are.
public struct FramedSink<Base: RequestBodySink>: ByteSink {
    /// The shell's sink.
    public var base: Base
    /// Whether writes are framed as chunks.
    public var chunked: Bool

    /// Wraps `base`.
    public init(_ base: Base, chunked: Bool) {
        self.base = base
        self.chunked = chunked
    }

    /// Writes `bytes`, as one chunk when `chunked`.
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {
        if chunked {
            ChunkedEncoder.writeChunk(bytes, into: &base)
        } else {
            base.write(bytes)
        }
    }
}
