public import HTTP1
public import HTTPCore

/// Where a spool flush stands (`RequestBodySink.flushSpools`).
public enum SpoolFlush: Sendable, Equatable {
    /// Every byte is on disk: the spools can be sent.
    case done
    /// Writes are still in flight off the loop; the shell reports when they land
    /// (`hashingProgressed`, the worker's progress signal).
    case pending
    /// A write failed (e.g. ENOSPC).
    case failed
}

/// The shell's writer for request body bytes: the upstream's output, the staging buffer, or
/// a spool file, as `destination` names. The exchange picks the destination; the sink only
/// writes. Spool bytes are written to disk off the loop thread: a write here only queues them,
/// and the shell reports progress when they land.
public protocol RequestBodySink: ByteSink {
    /// Where `write(_:)` goes.
    var destination: BodyDestination { get set }
    /// The bytes waiting at `destination` now, however they got there (written here, or
    /// moved): the upstream's unwritten output, or the staging buffer (0 for the spools,
    /// whose backlog is `spoolBacklogged`). Read live, so the exchange never reconstructs
    /// what it has written.
    var queued: Int { get }
    /// Creates the spool (and, with `files`, the file spool) of `request_body: buffer`;
    /// `false` when a temp file cannot be created.
    mutating func openSpools(files: Bool) -> Bool
    /// Hands over what the spools buffer and says whether all of it is on disk yet.
    mutating func flushSpools() -> SpoolFlush
    /// Whether a spool write has failed (e.g. ENOSPC).
    var spoolFailed: Bool { get }
    /// Whether the spools hold so much not yet on disk that the client should wait (reading
    /// resumes on the shell's progress signal).
    var spoolBacklogged: Bool { get }
    /// Opens a loan over `input` (`InputLoan`), which is about to be read from its start:
    /// until `settleLoan`, writes of bytes that lie in the chunk `lend` names may move them
    /// out of the input rather than copy them. `false`: the input cannot lend (the caller
    /// drains it itself).
    mutating func openLoan(_ input: some ByteSource) -> Bool
    /// The chunk being read now, `offset` bytes from the input's start.
    mutating func lend(_ chunk: UnsafeRawBufferPointer, at offset: Int)
    /// Ends the loan: the writes are done in order and the first `used` input bytes drained.
    mutating func settleLoan(used: Int)
}

extension RequestBodySink {
    /// No loans: every write copies.
    public mutating func openLoan(_ input: some ByteSource) -> Bool { false }
    public mutating func lend(_ chunk: UnsafeRawBufferPointer, at offset: Int) {}
    public mutating func settleLoan(used: Int) {}
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

    /// Writes `bytes` as `write(_:)` does, sharing them with `reader` when the base can.
    public mutating func write(_ bytes: UnsafeRawBufferPointer, sharingWith reader: any SharedBytesReader)
        -> Bool
    {
        guard chunked else { return base.write(bytes, sharingWith: reader) }
        return ChunkedEncoder.writeChunk(bytes, into: &base, sharingWith: reader)
    }
}
