/// Body bytes rewritten in line but forwarded without a copy: while a request's input is
/// parsed, the writes of bytes that lie in the input (a file part's content) become moves of
/// the input's chains to the output (`evbuffer_remove_buffer`), in order with the bytes the
/// rewrite makes (delimiters, part heads, injected fields), which are copied.
///
/// The input cannot change while it is read (its chunks are borrowed), so writes are
/// recorded and done at the end (`settle`): a copy written before any move goes out at once;
/// after the first move, copies wait in a scratch buffer and moves as input offsets. `settle`
/// then drains what lies before each move and moves the piece, copying what waited between.
/// Only whole chains move; the part of a chain a piece covers is copied by libevent itself.
///
/// A move may also be shared (`write(_:to:sharing:)`): at `settle` its chains are referenced,
/// not copied, before they move (`EvBuffer.addReferences`), and whoever shares them (a large
/// file's digest, hashed on another thread) gets where they lie and a release to call, on this
/// thread, when done. The chains stay until both the target and the sharer are done.
///
/// Pieces under `minimumMove` are copied (a move of a few bytes saves nothing). A loan
/// records at most `maximumMoves` moves; past that, bytes are copied, so what a loan keeps is
/// bounded by the input one read step covers.
///
/// One per exchange, used on its loop's thread.
public struct InputLoan {
    /// Pieces shorter than this are copied.
    public static let minimumMove = 2048
    /// The most moves one loan records.
    public let maximumMoves: Int

    /// Hears where shared bytes lie once they are pinned, and the release to call (on the
    /// loan's thread) when done with them.
    public typealias Sharer = (_ regions: [UnsafeRawBufferPointer], _ release: @escaping () -> Void) -> Void

    private enum Write {
        /// `scratch[range]` to `target`.
        case copy(EvBuffer, Range<Int>)
        /// `count` input bytes from `offset` (from the input's start when the loan opened).
        case move(EvBuffer, offset: Int, count: Int)
        /// A move whose chains `sharer` also gets.
        case sharedMove(EvBuffer, offset: Int, count: Int, sharer: Sharer)
    }

    private var input: EvBuffer?
    /// The chunk being read and its offset in the input.
    private var chunk = UnsafeRawBufferPointer(start: nil, count: 0)
    private var chunkOffset = 0
    private var writes: [Write] = []
    private var scratch: [UInt8] = []
    /// Where a shared move's chains wait while they are referenced.
    private var stage: OwnedEvBuffer?
    /// Moves recorded by this loan.
    public private(set) var moves = 0
    /// Bytes moved rather than copied, over every loan (for tests and the profile).
    public private(set) var movedBytes: Int64 = 0

    /// Creates a loan recording at most `maximumMoves` moves per read step.
    public init(maximumMoves: Int = 256) {
        self.maximumMoves = maximumMoves
    }

    /// Whether a loan is open (writes are recorded).
    public var isOpen: Bool { input != nil }

    /// Opens a loan over `input`, whose bytes are about to be read from its start.
    public mutating func open(_ input: EvBuffer) {
        precondition(self.input == nil, "a loan is already open")
        self.input = input
        moves = 0
    }

    /// `chunk`, `offset` bytes from the input's start, is the one being read now.
    public mutating func lend(_ chunk: UnsafeRawBufferPointer, at offset: Int) {
        self.chunk = chunk
        chunkOffset = offset
    }

    /// Writes `bytes` to `target`: recorded as a move when they lie in the chunk being read,
    /// else copied (at once when nothing waits before them).
    public mutating func write(_ bytes: UnsafeRawBufferPointer, to target: EvBuffer) {
        guard bytes.count > 0 else { return }
        if let offset = movableOffset(bytes) {
            if case .move(let last, let lastOffset, let lastCount) = writes.last, last.raw == target.raw,
                lastOffset + lastCount == offset
            {
                writes[writes.count - 1] = .move(target, offset: lastOffset, count: lastCount + bytes.count)
            } else {
                writes.append(.move(target, offset: offset, count: bytes.count))
                moves += 1
            }
            return
        }
        copy(bytes, to: target)
    }

    /// Writes `bytes` to `target` as `write(_:to:)` does and, when they move, shares them with
    /// `sharer` (called at `settle`); returns whether they will be shared (else they were
    /// copied and `sharer` is never called). `sharer` is evaluated only when the bytes move:
    /// a copy makes no closure.
    public mutating func write(
        _ bytes: UnsafeRawBufferPointer, to target: EvBuffer, sharing sharer: @autoclosure () -> Sharer
    )
        -> Bool
    {
        guard let offset = movableOffset(bytes) else {
            copy(bytes, to: target)
            return false
        }
        writes.append(.sharedMove(target, offset: offset, count: bytes.count, sharer: sharer()))
        moves += 1
        return true
    }

    /// The input offset of `bytes` when they may move: long enough, in the chunk being read,
    /// within the move cap.
    private func movableOffset(_ bytes: UnsafeRawBufferPointer) -> Int? {
        guard let start = bytes.baseAddress, bytes.count >= Self.minimumMove, moves < maximumMoves,
            let chunkStart = chunk.baseAddress, start >= chunkStart,
            start + bytes.count <= chunkStart + chunk.count
        else { return nil }
        return chunkOffset + (start - chunkStart)
    }

    private mutating func copy(_ bytes: UnsafeRawBufferPointer, to target: EvBuffer) {
        guard !writes.isEmpty else { return target.add(bytes) }
        let from = scratch.count
        scratch.append(contentsOf: bytes)
        if case .copy(let last, let range) = writes.last, last.raw == target.raw, range.upperBound == from {
            writes[writes.count - 1] = .copy(target, range.lowerBound..<scratch.count)
        } else {
            writes.append(.copy(target, from..<scratch.count))
        }
    }

    /// Ends the loan: does the recorded writes in order and drains the first `used` input
    /// bytes (those moved included).
    public mutating func settle(used: Int) {
        guard let input else { return }
        self.input = nil
        chunk = UnsafeRawBufferPointer(start: nil, count: 0)
        var removed = 0
        for write in writes {
            switch write {
            case .copy(let target, let range):
                scratch.withUnsafeBytes { target.add(UnsafeRawBufferPointer(rebasing: $0[range])) }
            case .move(let target, let offset, let count):
                if offset > removed { input.drain(offset - removed) }
                input.move(count, to: target)
                removed = offset + count
                movedBytes += Int64(count)
            case .sharedMove(let target, let offset, let count, let sharer):
                if offset > removed { input.drain(offset - removed) }
                share(input, count, to: target, sharer)
                removed = offset + count
                movedBytes += Int64(count)
            }
        }
        if used > removed { input.drain(used - removed) }
        writes.removeAll(keepingCapacity: true)
        scratch.removeAll(keepingCapacity: scratch.count <= 64 * 1024)
    }

    /// Moves the first `count` input bytes to `target` through the stage, whose chains are
    /// referenced first by a buffer `sharer` gets (freed by its release). Only whole chains
    /// move; libevent copies the piece of a chain the count ends in, into the stage.
    private mutating func share(_ input: EvBuffer, _ count: Int, to target: EvBuffer, _ sharer: Sharer) {
        let stage = self.stage ?? OwnedEvBuffer()
        self.stage = stage
        input.move(count, to: stage.buffer)
        let references = OwnedEvBuffer()
        var regions: [UnsafeRawBufferPointer] = []
        if references.buffer.addReferences(to: stage.buffer) {
            references.buffer.forEachChunk { chunk in
                regions.append(chunk)
                return true
            }
            stage.buffer.moveAll(to: target)
            // The references go with the release closure, once it is called and dropped.
            sharer(regions) { withExtendedLifetime(references) {} }
        } else {
            // Not shareable (never expected of an input's chains): the sharer gets a copy.
            let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
            var filled = 0
            stage.buffer.forEachChunk { chunk in
                UnsafeMutableRawBufferPointer(rebasing: copy[filled..<filled + chunk.count]).copyMemory(
                    from: chunk)
                filled += chunk.count
                return true
            }
            stage.buffer.moveAll(to: target)
            sharer([UnsafeRawBufferPointer(copy)]) { copy.deallocate() }
        }
    }
}
