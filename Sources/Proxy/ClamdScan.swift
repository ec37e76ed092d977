import EventLoop
import Inspection
import UploadRules

/// One file on its way to clamd (`InspectionStream`), on a worker's event loop: a connection
/// from the scanner's pool, `zINSTREAM`, the file in chunks as the pipeline forwards it, the
/// zero length at its end, then clamd's reply. Nothing blocks: bytes clamd has not taken wait
/// in the socket's output, and above `highMark` the scan asks its client to pause
/// (`wantsPause`); the loop's progress signal brings it back when they drained below
/// `lowMark`, or when a decision arrived.
///
/// Fails closed: a refused or broken connection, a write that does not progress within the
/// scanner's `timeout`, no answer within `timeout` of the file's end, a reply that is not clamd's, an `ERROR` and clamd's own
/// size-limit heuristic are failures (503, or passed and logged `error` under `on_error:
/// allow`); only `stream: OK` releases a file. A file over `max_bytes` stops being streamed
/// and is refused (413) or passed unscanned (`skipped`).
///
/// The pipeline owns the scan; dropping it closes the connection and frees its pool slot.
/// `@unchecked Sendable`: it travels in the proxy's actions, and is used on its loop alone.
final class ClamdScan: InspectionStream, @unchecked Sendable {
    /// Queued bytes above which the client pauses, and below which it reads again.
    static let highMark = 1 << 20
    static let lowMark = 256 << 10

    private let rule: ScanRule
    private let pool: ClamdPool
    private let part: String
    private var socket: BufferedSocket?
    /// Bytes given before the pool granted a connection.
    private var queued: OwnedEvBuffer? = OwnedEvBuffer()
    private var holdsSlot = false
    private var connected = false
    private var ended = false
    private var given: Int64 = 0
    private var reader = ClamdReplyReader()
    private var decision: HoldDecision?
    private(set) var logValue: String?
    private var decided: ((HoldDecision?) -> Void)?
    /// When the file ended (for the scan-latency histogram), in loop milliseconds.
    private var endedAt: Int64 = 0
    /// Fails the scan `timeout` after the file's end if clamd has not answered by then.
    private var deadline: Timer?

    init(rule: ScanRule, pool: ClamdPool, part: PartLogRecord) {
        self.rule = rule
        self.pool = pool
        self.part = part.name
        pool.acquire(for: self)
    }

    deinit {
        deadline?.cancel()
        socket?.close()
        if holdsSlot { pool.release() }
    }

    var earlyDecision: HoldDecision? { decision }

    var wantsPause: Bool {
        guard decision == nil, !ended else { return false }
        guard let socket, connected else { return true }
        return socket.output.count > Self.highMark
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard decision == nil, !ended, !bytes.isEmpty else { return }
        given += Int64(bytes.count)
        guard given <= rule.scanner.maxBytes else { return oversize() }
        let output = socket?.output ?? queued!.buffer
        var rest = bytes
        while !rest.isEmpty {
            let count = min(rest.count, ClamdStream.maxChunk)
            withUnsafeBytes(of: ClamdStream.chunkHeader(count)) { output.add($0) }
            output.add(UnsafeRawBufferPointer(rebasing: rest[..<count]))
            rest = UnsafeRawBufferPointer(rebasing: rest[count...])
        }
    }

    func end() {
        guard decision == nil, !ended else { return }
        ended = true
        endedAt = pool.now()
        (socket?.output ?? queued!.buffer).add(ClamdStream.end)
        // clamd answers once it has the whole file: within `timeout` of its end, whether the
        // scan still waits for a connection, for clamd to take the bytes, or for its verdict.
        let deadline = Timer(base: pool.base) { [weak self] in self?.fail("clamd did not answer in time") }
        deadline.schedule(milliseconds: rule.scanner.timeoutMilliseconds)
        self.deadline = deadline
    }

    func whenDecided(_ body: @escaping (HoldDecision?) -> Void) {
        if let decision { return body(decision) }
        decided = body
    }

    /// The pool granted a connection: connect, and queue the command and what was given.
    func connect(_ base: EventBase) {
        holdsSlot = true
        guard decision == nil else { return pool.release() }
        do throws(EventLoopError) {
            let address: SocketAddress
            switch rule.scanner.address {
            case .unix(let path): address = try SocketAddress(unixPath: path)
            case .tcp(let host, let port):
                address = try SocketAddress(
                    parsing: host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)")
            }
            let socket = try BufferedSocket.connect(
                base: base, address: address, delegate: ClamdScanDelegate(self))
            socket.setWatermarks(readHigh: 4096, writeLow: Self.lowMark)
            socket.setTimeouts(readMilliseconds: 0, writeMilliseconds: rule.scanner.timeoutMilliseconds)
            socket.output.add(ClamdStream.command)
            queued?.buffer.moveAll(to: socket.output)
            queued = nil
            self.socket = socket
        } catch {
            fail("cannot connect to clamd at \(rule.scanner.address)")
        }
    }

    fileprivate func socket(_ socket: BufferedSocket, events: SocketEvents) {
        if events.contains(.connected) {
            connected = true
            socket.enable()
            pool.progressed()
            return
        }
        if events.contains(.timeout) { return fail("clamd stopped taking the file") }
        if events.contains(.endOfFile) {
            return judge(reader.finish())
        }
        fail(
            connected ? "the connection to clamd broke" : "cannot connect to clamd at \(rule.scanner.address)"
        )
    }

    fileprivate func socketReadable(_ socket: BufferedSocket) {
        let input = socket.input
        input.forEachChunk { chunk in
            _ = reader.take(chunk)
            return reader.reply == nil
        }
        input.drain(input.count)
        if let reply = reader.reply { judge(reply) }
    }

    fileprivate func socketWritable(_ socket: BufferedSocket) {
        if !ended { pool.progressed() }
    }

    /// clamd answered (or, before the file ended, spoke out of turn: its size-limit error).
    private func judge(_ reply: ClamdReply) {
        guard decision == nil else { return }
        switch reply {
        case .clean where ended:
            decide(.release, log: "clean")
        case .infected(let signature) where ended:
            decide(
                .refuse(RuleRefusal(.fileRefused, description: "part \(part): virus found: \(signature)")),
                log: "infected:\(signature)")
        case .clean, .infected:
            fail("clamd answered before the file ended")
        case .limitExceeded(let signature):
            fail("clamd did not scan the whole file (\(signature))")
        case .error(let message):
            fail("clamd failed: \(message)")
        case .garbage:
            fail("clamd's answer is not one")
        }
    }

    /// The scan failed: `on_error` decides.
    private func fail(_ detail: String) {
        guard decision == nil else { return }
        pool.failed(detail)
        switch rule.onError {
        case .reject:
            decide(
                .refuse(
                    RuleRefusal(
                        .inspectionFailed, description: "the virus scan of part \(part) failed: \(detail)")),
                log: "error")
        case .allow:
            decide(.release, log: "error")
        }
    }

    /// The file passed `max_bytes`: `oversize` decides; nothing more is streamed.
    private func oversize() {
        switch rule.oversize {
        case .reject:
            decide(
                .refuse(
                    RuleRefusal(
                        .fileTooLargeToInspect,
                        description:
                            "part \(part) is larger than the virus scanner scans (\(rule.scanner.maxBytes) bytes)"
                    )
                ), log: "skipped")
        case .allow:
            decide(.release, log: "skipped")
        }
    }

    private func decide(_ decision: HoldDecision, log: String) {
        self.decision = decision
        logValue = log
        deadline?.cancel()
        deadline = nil
        if ended, log != "skipped" { pool.scanned(milliseconds: pool.now() - endedAt) }
        socket?.close()
        socket = nil
        queued = nil
        if holdsSlot {
            holdsSlot = false
            pool.release()
        }
        if let decided {
            self.decided = nil
            withExtendedLifetime(self) { decided(decision) }
        } else if !ended {
            // A paused client learns of it on the loop's progress signal.
            pool.progressed()
        }
    }
}

/// The scan socket's delegate: it forwards to the scan while the scan lives (the pipeline, not
/// the socket, decides how long the scan lives).
private final class ClamdScanDelegate: BufferedSocketDelegate {
    weak var scan: ClamdScan?

    init(_ scan: ClamdScan) {
        self.scan = scan
    }

    func socketReadable(_ socket: BufferedSocket) { scan?.socketReadable(socket) }
    func socketWritable(_ socket: BufferedSocket) { scan?.socketWritable(socket) }
    func socket(_ socket: BufferedSocket, events: SocketEvents) { scan?.socket(socket, events: events) }
}
