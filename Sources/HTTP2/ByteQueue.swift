internal import HTTPCore

/// A first-in first-out run of bytes: one stream's inbound DATA or outbound response body.
///
/// One contiguous array with a read offset; the consumed prefix is dropped when it is
/// empty or larger than what remains, so a queue costs at most twice its high-water mark
/// and bytes are copied once in and once out.
struct ByteQueue {
    private var storage: [UInt8] = []
    private var head = 0

    /// The bytes waiting.
    var count: Int { storage.count - head }

    /// Whether no bytes are waiting.
    var isEmpty: Bool { head == storage.count }

    /// Appends a copy of `bytes`.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        storage.append(contentsOf: bytes)
    }

    /// Copies up to `destination.count` bytes into `destination` and removes them; returns
    /// how many were copied.
    mutating func pop(into destination: UnsafeMutableRawBufferPointer) -> Int {
        let taken = min(destination.count, count)
        guard taken > 0 else { return 0 }
        storage.withUnsafeBytes { source in
            destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[head..<head + taken]))
        }
        drop(taken)
        return taken
    }

    /// Writes up to `maxCount` bytes into `sink` and removes them; returns how many.
    mutating func pop(into sink: inout some ByteSink, maxCount: Int) -> Int {
        let taken = min(maxCount, count)
        guard taken > 0 else { return 0 }
        storage.withUnsafeBytes { source in
            sink.write(UnsafeRawBufferPointer(rebasing: source[head..<head + taken]))
        }
        drop(taken)
        return taken
    }

    /// Removes everything (the memory is released).
    mutating func removeAll() {
        storage = []
        head = 0
    }

    private mutating func drop(_ taken: Int) {
        head += taken
        if head == storage.count {
            storage.removeAll(keepingCapacity: storage.capacity <= 1 << 16)
            head = 0
        } else if head > storage.count - head {
            storage.removeFirst(head)
            head = 0
        }
    }
}
