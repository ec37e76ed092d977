public import HTTPCore

/// One piece of a large part's bytes for the hashing threads: a block copied out of the part,
/// or bytes a sink forwards by reference and shares (`ByteSink.write(_:sharingWith:)`), queued
/// in order before they are pinned and hashed once the sink attaches where they lie. A shared
/// block's pin is released on the loop's thread after hashing (`DigestQueue.releaseHashed`).
public final class DigestBlock: SharedBytesReader, @unchecked Sendable {
    /// The part the bytes belong to.
    let state: DigestState
    /// The number of bytes.
    private(set) var count: Int
    private let copied: [UInt8]
    // Under the pool's lock, for a shared block.
    private var regions: [UnsafeRawBufferPointer] = []
    private var release: (() -> Void)?
    /// The bytes can be hashed: copied, or shared and attached.
    private(set) var isReady: Bool

    /// A block of copied bytes.
    init(copying bytes: [UInt8], of state: DigestState) {
        self.state = state
        count = bytes.count
        copied = bytes
        isReady = true
    }

    /// A block for `count` bytes a sink will share.
    init(sharing count: Int, of state: DigestState) {
        self.state = state
        self.count = count
        copied = []
        isReady = false
    }

    /// Makes an unqueued shared block one for `count` bytes (`PartDigests.sharedBlock` reuses
    /// a block no sink took).
    func resize(_ count: Int) {
        precondition(!isReady && release == nil, "a block resized after it was shared")
        self.count = count
    }

    /// Whether the bytes are pinned by a sink (released on the loop's thread after hashing).
    var isShared: Bool { release != nil }

    public func attach(_ regions: [UnsafeRawBufferPointer], release: @escaping () -> Void) {
        guard let pool = state.queue?.pool, pool.attach(self, regions: regions, release: release) else {
            return release()
        }
    }

    /// Records where the shared bytes lie (under the pool's lock).
    func pin(_ regions: [UnsafeRawBufferPointer], release: @escaping () -> Void) {
        precondition(regions.reduce(0) { $0 + $1.count } == count, "shared bytes are not the block's")
        self.regions = regions
        self.release = release
        isReady = true
    }

    /// Hashes the bytes into `state` (on a hashing thread, outside the lock: the block is the
    /// thread's while it runs).
    func hash() {
        if regions.isEmpty {
            copied.withUnsafeBytes { state.update($0) }
        } else {
            for region in regions { state.update(region) }
        }
    }

    /// Gives the pin back (on the loop's thread); a copied block has none.
    func unpin() {
        let release = self.release
        self.release = nil
        regions = []
        release?()
    }
}
