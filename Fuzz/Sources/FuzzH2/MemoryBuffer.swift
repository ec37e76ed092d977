import HTTP1
import HTTPCore
import ProxyCore

/// Bytes read from the front, as an evbuffer is: a stream's input (the session writes its DATA
/// here) or the upstream's answer.
final class MemoryBuffer: ByteSource, ByteSink {
    private var storage: [UInt8] = []
    private var start = 0

    var count: Int { storage.count - start }

    func forEachChunk(limit: Int, _ body: (UnsafeRawBufferPointer) -> Bool) {
        let end = start + min(limit, count)
        guard end > start else { return }
        storage.withUnsafeBytes { _ = body(UnsafeRawBufferPointer(rebasing: $0[start..<end])) }
    }

    func drain(_ count: Int) {
        start += min(count, self.count)
        if start == storage.count {
            storage.removeAll(keepingCapacity: true)
            start = 0
        }
    }

    func remove(_ count: Int) -> [UInt8] {
        let taken = Array(storage[start..<start + min(count, self.count)])
        drain(count)
        return taken
    }

    func write(_ bytes: UnsafeRawBufferPointer) {
        storage.append(contentsOf: bytes)
    }

    func write(_ text: String) {
        storage.append(contentsOf: text.utf8)
    }
}

/// The request body sink of a `FuzzStream`: it counts what would go upstream, to the staging
/// buffer or to the spools (the spools are memory and always on "disk").
struct CountingBodySink: RequestBodySink {
    unowned let stream: FuzzStream
    var destination = BodyDestination.staging

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        switch destination {
        case .upstream: stream.upstreamBytes += bytes.count
        case .staging: stream.staging += bytes.count
        case .spool: stream.spool += Int64(bytes.count)
        case .fileSpool: stream.fileSpool += Int64(bytes.count)
        }
    }

    mutating func openSpools(files: Bool) -> Bool { true }

    mutating func flushSpools() -> SpoolFlush { .done }

    var spoolFailed: Bool { false }

    var spoolBacklogged: Bool { false }

    /// What goes upstream is taken at once (`FuzzStream.levels`); the staging buffer holds.
    var queued: Int { destination == .staging ? stream.staging : 0 }
}
