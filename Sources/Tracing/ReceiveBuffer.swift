import HTTP1

/// Bytes read off the collector connection and not yet parsed: the `ByteSource` the shared
/// HTTP/1.1 response reader (`ResponseHeadReader`, `BodyDecoder`) consumes from the front.
final class ReceiveBuffer: ByteSource {
    private var bytes: [UInt8] = []
    /// The first unread byte.
    private var start = 0

    var count: Int { bytes.count - start }

    /// Appends `chunk` behind the unread bytes.
    func append(_ chunk: UnsafeRawBufferPointer) {
        if start > 0, start >= bytes.count / 2 {
            bytes.removeFirst(start)
            start = 0
        }
        bytes.append(contentsOf: chunk)
    }

    func forEachChunk(limit: Int, _ body: (UnsafeRawBufferPointer) -> Bool) {
        let end = start + min(limit, count)
        guard end > start else { return }
        bytes.withUnsafeBytes { raw in
            _ = body(UnsafeRawBufferPointer(rebasing: raw[start..<end]))
        }
    }

    func drain(_ count: Int) {
        start += min(count, self.count)
        if start == bytes.count {
            bytes.removeAll(keepingCapacity: true)
            start = 0
        }
    }

    func remove(_ count: Int) -> [UInt8] {
        let taken = Array(bytes[start..<(start + min(count, self.count))])
        drain(taken.count)
        return taken
    }

    /// Forgets every byte (the connection they came on is gone).
    func reset() {
        bytes.removeAll(keepingCapacity: true)
        start = 0
    }
}
