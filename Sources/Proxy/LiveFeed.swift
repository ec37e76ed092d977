import EventLoop
import HTTPCore
import ProxyCore

#if canImport(Glibc)
    import Glibc
#endif

/// The admin's side of the live view, on the admin thread: every `interval` it reads the
/// workers' boards (never stopping a worker), keeps each upload's rate, and sends the Server-
/// Sent Events of `GET /uploads/events` to its readers — an `upload` event when an upload is
/// new or changed (at most one per upload per second), a `finished` event per upload that
/// ended, `gone` for one that left the board without a finished record (the ring overran),
/// a comment every 15 s. `GET /uploads` is `snapshot()`.
///
/// A reader whose socket holds more than `readerLimit` unsent bytes is dropped, never
/// buffered without bound.
final class LiveFeed {
    /// How often the boards are read (milliseconds).
    static let interval: Int64 = 500
    /// The most unsent bytes a reader may hold (1 MiB; a test may lower it with
    /// `FORMGATE_TEST_LIVE_READER_LIMIT`, bytes).
    static let readerLimit: Int = {
        guard let text = getenv("FORMGATE_TEST_LIVE_READER_LIMIT"), let value = Int(String(cString: text)),
            value > 0
        else { return 1 << 20 }
        return value
    }()
    /// The finished uploads a snapshot lists.
    static let finishedShown = 100
    /// The most event stream readers at once (more get 503).
    static let maxReaders = 64

    let boards: [LiveBoard]
    private var timer: Timer?
    private var readers: [ObjectIdentifier: any LiveReader] = [:]
    /// What is known of each upload in flight, by worker and serial.
    private var known: [UploadKey: Known] = [:]
    /// The newest finished serial seen per worker.
    private var finishedSeen: [UInt64]
    private var lastKeepAlive: Int64 = 0
    /// The last finished uploads (newest last), at most `finishedShown`.
    private var recentFinished: [(worker: Int, record: LiveFinishedRecord)] = []
    private let clock: () -> Int64
    /// Readers dropped for falling behind, since the start.
    private(set) var droppedReaders = 0

    struct UploadKey: Hashable {
        var worker: Int
        var serial: UInt64
    }

    struct Known {
        var record: LiveRecord
        /// A sample at least a second old (bytes, time) the rate is measured from, and the
        /// latest.
        var base: (bytes: Int64, at: Int64)
        var latest: (bytes: Int64, at: Int64)
        var rate: Int64 = 0
        /// When it was last sent, and what.
        var sentAt: Int64 = 0
        var sent: LiveRecord?
    }

    init(base: EventBase, boards: [LiveBoard], clock: @escaping () -> Int64) {
        self.boards = boards
        self.clock = clock
        finishedSeen = Array(repeating: 0, count: boards.count)
        let timer = Timer(base: base, repeating: true) { [unowned self] in self.tick() }
        timer.schedule(milliseconds: Self.interval)
        self.timer = timer
        tick()
    }

    // MARK: Readers

    func add(_ reader: any LiveReader) {
        readers[ObjectIdentifier(reader)] = reader
        reader.send(Array("retry: 2000\n\n".utf8) + event("snapshot", snapshot()))
    }

    func remove(_ reader: any LiveReader) {
        readers[ObjectIdentifier(reader)] = nil
    }

    /// `reader` fell more than `readerLimit` behind and is being closed.
    func dropped(_ reader: any LiveReader) {
        droppedReaders += 1
        remove(reader)
    }

    /// The live view's series for `/metrics` (admin thread).
    func renderMetrics() -> String {
        "# HELP formgate_live_readers Readers of /uploads/events.\n# TYPE formgate_live_readers gauge\n"
            + "formgate_live_readers \(readers.count)\n"
            + "# HELP formgate_live_readers_dropped_total Readers of /uploads/events dropped for falling behind.\n"
            + "# TYPE formgate_live_readers_dropped_total counter\nformgate_live_readers_dropped_total \(droppedReaders)\n"
    }

    /// Readers connected now.
    var readerCount: Int { readers.count }

    // MARK: The view

    /// `GET /uploads`'s document.
    func snapshot() -> [UInt8] {
        var line = JSONLine(capacity: 4096)
        line.key("in_flight")
        line.beginArray()
        let order = known.sorted {
            ($0.value.record.startedUnixMilliseconds, $0.key.worker, $0.key.serial)
                < ($1.value.record.startedUnixMilliseconds, $1.key.worker, $1.key.serial)
        }
        for (_, upload) in order {
            line.beginObject()
            Self.write(upload.record, rate: upload.rate, into: &line)
            line.endObject()
        }
        line.endArray()
        line.key("finished")
        line.beginArray()
        for entry in recentFinished.reversed() {
            line.beginObject()
            Self.write(entry.record, into: &line)
            line.endObject()
        }
        line.endArray()
        return line.finish()
    }

    /// Reads the boards and tells the readers what changed.
    func tick() {
        let now = clock()
        var events: [UInt8] = []
        var present = Set<UploadKey>()
        var finishedIDs = Set<String>()
        for (worker, board) in boards.enumerated() {
            let finished = board.readFinished().filter { $0.serial > finishedSeen[worker] }.sorted {
                $0.serial < $1.serial
            }
            for record in finished {
                finishedSeen[worker] = record.serial
                finishedIDs.insert(record.requestID)
                recentFinished.append((worker, record))
                events += event("finished", Self.object { Self.write(record, into: &$0) })
            }
            for record in board.readInFlight() {
                let key = UploadKey(worker: worker, serial: record.serial)
                present.insert(key)
                observe(key, record, now: now)
            }
        }
        if recentFinished.count > Self.finishedShown {
            recentFinished.removeFirst(recentFinished.count - Self.finishedShown)
        }
        for (key, upload) in known where !present.contains(key) {
            known[key] = nil
            guard upload.sent != nil, !finishedIDs.contains(upload.record.status.requestID) else { continue }
            events += event(
                "gone",
                Self.object {
                    $0.key("id")
                    $0.string(upload.record.status.requestID)
                })
        }
        for key in present {
            guard var upload = known[key], upload.sent != upload.record, now - upload.sentAt >= 1000 else {
                continue
            }
            upload.sent = upload.record
            upload.sentAt = now
            known[key] = upload
            events += event("upload", Self.object { Self.write(upload.record, rate: upload.rate, into: &$0) })
        }
        if events.isEmpty, now - lastKeepAlive >= 15_000 {
            events = Array(": keep-alive\n\n".utf8)
        }
        guard !events.isEmpty else { return }
        lastKeepAlive = now
        for reader in Array(readers.values) { reader.send(events) }
    }

    /// Updates what is known of an upload in flight, and its rate over the last second or so.
    private func observe(_ key: UploadKey, _ record: LiveRecord, now: Int64) {
        guard var upload = known[key] else {
            let sample = (record.status.bytesIn, now)
            known[key] = Known(record: record, base: sample, latest: sample)
            return
        }
        upload.record = record
        if now - upload.latest.at >= 1000 || now - upload.base.at >= 2000 {
            upload.base = upload.latest
        }
        upload.latest = (record.status.bytesIn, now)
        let span = upload.latest.at - upload.base.at
        if span > 0 { upload.rate = (upload.latest.bytes - upload.base.bytes) * 1000 / span }
        known[key] = upload
    }

    private func event(_ name: String, _ data: [UInt8]) -> [UInt8] {
        Array("event: \(name)\ndata: ".utf8) + data + Array("\n\n".utf8)
    }

    private static func object(_ body: (inout JSONLine) -> Void) -> [UInt8] {
        var line = JSONLine(capacity: 512)
        body(&line)
        return line.finish()
    }

    /// DESIGN.md's in-flight object.
    static func write(_ record: LiveRecord, rate: Int64, into line: inout JSONLine) {
        let status = record.status
        line.key("id")
        line.string(status.requestID)
        line.key("route")
        line.string(status.route)
        line.key("protocol")
        line.string(status.http2 ? "h2" : "http/1.1")
        line.key("client")
        line.string(record.client)
        line.key("identity")
        line.string(status.identity)
        line.key("started")
        line.timestamp(unixMilliseconds: record.startedUnixMilliseconds)
        line.key("bytes_in")
        line.integer(status.bytesIn)
        line.key("bytes_expected")
        line.integer(status.bytesExpected)
        line.key("part")
        if let name = status.partName {
            line.beginObject()
            line.key("name")
            line.string(name)
            line.key("filename")
            line.string(status.partFilename)
            line.endObject()
        } else {
            line.null()
        }
        line.key("stage")
        line.string(status.stage.name)
        line.key("bytes_per_second")
        line.integer(rate)
        line.key("tus")
        if let offset = status.tusOffset {
            line.beginObject()
            line.key("offset")
            line.integer(offset)
            line.key("length")
            line.integer(status.tusLength)
            line.endObject()
        } else {
            line.null()
        }
    }

    /// DESIGN.md's finished object (and when it finished).
    static func write(_ record: LiveFinishedRecord, into line: inout JSONLine) {
        line.key("id")
        line.string(record.requestID)
        line.key("route")
        line.string(record.route)
        line.key("status")
        line.integer(record.status)
        line.key("duration_ms")
        line.integer(record.durationMilliseconds)
        line.key("bytes_in")
        line.integer(record.bytesIn)
        line.key("error")
        line.string(record.error)
        line.key("finished_at")
        line.timestamp(unixMilliseconds: record.finishedUnixMilliseconds)
    }
}

/// A reader of the event stream (an admin connection).
protocol LiveReader: AnyObject {
    /// Queues `bytes`; a reader that cannot keep up drops itself.
    func send(_ bytes: [UInt8])
}
