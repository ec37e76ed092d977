import CLibevent

/// What a connection's socket read, kept where it was read while other buffers refer to it:
/// an HTTP/2 connection hands a stream the payload of its DATA as a reference into the read
/// that carried it (`evbuffer_add_reference`), not as a copy.
///
/// `feed` takes a socket's whole input into a block (its chains move; nothing is copied)
/// and passes the block's chunks on in order. Meanwhile `append` adds bytes that lie in the
/// chunk being passed to a buffer by reference: the block then stays alive until the last
/// buffer holding a reference into it frees that reference (after the bytes were written
/// upstream, or dropped). A block keeps its chains whole however few of its bytes are
/// referred to, so the blocks kept alive take at most `limit` bytes of chains (as the socket
/// reserved them: `BufferedSocket.inputFootprint`); past that, and for pieces under
/// `minimumReference` (a reference costs a chain allocation and a callback, more than copying
/// so few bytes), `append` copies.
///
/// One per connection, used on its loop's thread; the buffers that hold references must be
/// freed on that thread too.
public final class PinnedReads {
    /// The pieces `append` copies rather than refers to: fewer bytes than this.
    public static let minimumReference = 2048
    /// The most memory the blocks that references keep alive may take.
    public let limit: Int
    /// The memory the blocks that references keep alive take.
    public fileprivate(set) var pinned = 0
    /// The block being fed, and the chunk of it being passed on.
    private var block: ReadBlock?
    private var chunk = UnsafeRawBufferPointer(start: nil, count: 0)
    /// A block no reference kept, emptied for the next read.
    private var spare: ReadBlock?

    /// Creates the reads of one connection, keeping at most `limit` bytes alive by reference.
    public init(limit: Int) {
        self.limit = limit
    }

    /// Takes everything `input` holds (a socket's input; `footprint`: the memory its chains
    /// take, `BufferedSocket.inputFootprint`) and passes it to `body` chunk by chunk, in order;
    /// returns what `body` threw, after which the rest is dropped.
    public func feed<Failure: Error>(
        _ input: EvBuffer, footprint: Int, to body: (UnsafeRawBufferPointer) throws(Failure) -> Void
    ) -> Failure? {
        let block = spare ?? ReadBlock(owner: self)
        spare = nil
        block.footprint = max(footprint, input.count)
        input.moveAll(to: block.storage.buffer)
        self.block = block
        defer { release() }
        var failure: Failure?
        block.storage.buffer.forEachChunk { chunk in
            self.chunk = chunk
            do throws(Failure) {
                try body(chunk)
                return true
            } catch {
                failure = error
                return false
            }
        }
        return failure
    }

    /// Appends `bytes` to `buffer`: by reference when they lie in the chunk being fed, are at
    /// least `minimumReference` long and the limit allows, else as a copy.
    public func append(_ bytes: UnsafeRawBufferPointer, to buffer: EvBuffer) {
        guard bytes.count >= Self.minimumReference, let block, let start = bytes.baseAddress,
            let chunkStart = chunk.baseAddress, start >= chunkStart,
            start + bytes.count <= chunkStart + chunk.count,
            block.counted || pinned + block.footprint <= limit
        else { return buffer.add(bytes) }
        if !block.counted {
            block.counted = true
            pinned += block.footprint
        }
        let reference = Unmanaged.passRetained(block).toOpaque()
        guard evbuffer_add_reference(buffer.raw, start, bytes.count, releaseReference, reference) == 0 else {
            Unmanaged<ReadBlock>.fromOpaque(reference).release()
            return buffer.add(bytes)
        }
    }

    /// The feed is over: a block no reference holds is emptied and kept for the next one.
    private func release() {
        chunk = UnsafeRawBufferPointer(start: nil, count: 0)
        guard var block else { return }
        self.block = nil
        guard isKnownUniquelyReferenced(&block) else { return }
        block.storage.buffer.drain(block.storage.buffer.count)
        block.uncount()
        spare = block
    }
}

/// The chains of one read, freed when the last reference into them goes.
private final class ReadBlock {
    let owner: PinnedReads
    let storage = OwnedEvBuffer()
    /// The memory the chains take.
    var footprint = 0
    /// Whether a reference was made into the block: its footprint counts in `owner.pinned`.
    var counted = false

    init(owner: PinnedReads) {
        self.owner = owner
    }

    func uncount() {
        guard counted else { return }
        counted = false
        owner.pinned -= footprint
    }

    deinit {
        uncount()
    }
}

/// libevent's cleanup of a reference made by `PinnedReads.append`: the reference's retain of
/// its block goes.
private func releaseReference(_ data: UnsafeRawPointer?, _ length: Int, _ block: UnsafeMutableRawPointer?) {
    guard let block else { return }
    Unmanaged<ReadBlock>.fromOpaque(block).release()
}
