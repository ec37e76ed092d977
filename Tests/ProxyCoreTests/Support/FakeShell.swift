import HTTP1
import ProxyCore

/// Bytes in a buffer that the state machine reads from the front (a fake evbuffer).
final class ArraySource: ByteSource {
    private var storage: [UInt8] = []
    /// Bytes drained from the front of `storage` (dropped lazily, so draining is cheap).
    private var start = 0

    /// The buffered bytes.
    var bytes: [UInt8] {
        get { Array(storage[start...]) }
        set {
            storage = newValue
            start = 0
        }
    }

    var count: Int { storage.count - start }

    func forEachChunk(limit: Int, _ body: (UnsafeRawBufferPointer) -> Bool) {
        let end = start + min(limit, count)
        guard end > start else { return }
        // Two chunks, so that readers meet a chunk boundary.
        let middle = start + (end - start) / 2
        storage.withUnsafeBytes { all in
            if body(UnsafeRawBufferPointer(rebasing: all[start..<middle])), middle < end {
                _ = body(UnsafeRawBufferPointer(rebasing: all[middle..<end]))
            }
        }
    }

    func drain(_ count: Int) {
        start += min(count, self.count)
        if start > 1 << 20, start * 2 > storage.count {
            storage.removeFirst(start)
            start = 0
        }
    }

    func remove(_ count: Int) -> [UInt8] {
        let taken = Array(storage[start..<start + min(count, self.count)])
        drain(count)
        return taken
    }

    func append(_ text: String) {
        storage.append(contentsOf: text.utf8)
    }

    func append(contentsOf bytes: some Sequence<UInt8>) {
        storage.append(contentsOf: bytes)
    }
}

/// What the I/O shell would hold for one connection: its buffers, reading state, timers and
/// the upstream connection, all in memory.
final class FakeShell {
    enum Upstream: Equatable { case none, connecting, connected }

    let clientInput = ArraySource()
    /// Queued for the client and not yet read by it.
    var clientOutput: [UInt8] = []
    /// What the client has read.
    var clientReceived: [UInt8] = []
    let upstreamInput = ArraySource()
    /// Queued for the upstream and not yet read by it.
    var upstreamOutput: [UInt8] = []
    /// What the upstream has read.
    var upstreamReceived: [UInt8] = []
    var staging: [UInt8] = []
    var spool: [UInt8]?
    var fileSpool: [UInt8]?
    /// Spool bytes "in flight" to a disk that has not written them yet (a test sets it).
    var spoolBacklog = 0
    /// `spoolBacklogged` from this many bytes in flight.
    var spoolBacklogLimit = Int.max
    /// Whether a spool write "failed".
    var spoolFailed = false
    /// How many times the exchange asked for the spools to be flushed.
    var spoolFlushes = 0
    var clientReading = true
    var upstreamReading = true
    var upstream = Upstream.none
    var timers: [TimerID: Int64] = [:]
    /// Timers started, and timers that were cancelled or fired (for the invariants).
    var timersStarted = 0
    var records: [AccessRecord] = []
    var exchangesStarted = 0
    var connects: [UpstreamURL] = []
    var released = 0
    var aborted = 0
    var closed = false
    var shutDown = false
    /// Actions that wrote or moved bytes after the connection was closed.
    var sentAfterClose = 0
    /// Moves of request body bytes the client's input did not hold.
    var overdrawn = 0
    /// Every action executed, in order (for assertions on the sequence).
    var log: [String] = []
    /// HTTP/2: the response heads sent on the stream, in order.
    var streamHeads: [StreamResponseHead] = []
    /// HTTP/2: how many times the stream was ended (`endClientStream`).
    var streamEnds = 0
    /// The harness's state machine reads the client's (the upstream's) buffered input again.
    var processClient: () -> Void = {}
    var processUpstream: () -> Void = {}
    /// The bytes of a `send` action's range in the harness's action buffer.
    var actionBytes: (Range<Int>) -> [UInt8] = { _ in [] }
    /// The record of the `finish` action being executed, from the harness's action buffer.
    var finishedRecord: () -> AccessRecord? = { nil }

    var levels: BufferLevels {
        BufferLevels(
            clientOutput: clientOutput.count, upstreamOutput: upstreamOutput.count, staging: staging.count,
            spool: Int64(spool?.count ?? 0), fileSpool: Int64(fileSpool?.count ?? 0))
    }

    /// The client reads everything queued for it.
    func clientReadsAll() {
        clientReceived += clientOutput
        clientOutput.removeAll()
    }

    /// The upstream reads everything queued for it.
    func upstreamReadsAll() {
        upstreamReceived += upstreamOutput
        upstreamOutput.removeAll()
    }

    /// The response text the client read.
    var clientText: String { String(decoding: clientReceived, as: UTF8.self) }
}

/// The request body sink over a fake shell.
struct FakeSink: RequestBodySink {
    let shell: FakeShell
    var destination = BodyDestination.staging

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        if shell.closed { shell.sentAfterClose += 1 }
        switch destination {
        case .upstream: shell.upstreamOutput.append(contentsOf: bytes)
        case .staging: shell.staging.append(contentsOf: bytes)
        case .spool: shell.spool?.append(contentsOf: bytes)
        case .fileSpool: shell.fileSpool?.append(contentsOf: bytes)
        }
    }

    mutating func openSpools(files: Bool) -> Bool {
        shell.spool = []
        if files { shell.fileSpool = [] }
        return true
    }

    mutating func flushSpools() -> SpoolFlush {
        shell.spoolFlushes += 1
        if shell.spoolFailed { return .failed }
        return shell.spoolBacklog > 0 ? .pending : .done
    }

    var spoolFailed: Bool { shell.spoolFailed }

    var spoolBacklogged: Bool { shell.spoolBacklog >= shell.spoolBacklogLimit }

    var queued: Int {
        switch destination {
        case .upstream: shell.upstreamOutput.count
        case .staging: shell.staging.count
        case .spool, .fileSpool: 0
        }
    }
}
