import EventLoop
import Inspection
import UploadRules

/// One worker's connections to one clamd scanner: at most `connections` scans at once, one
/// connection per file (clamd closes it after its answer); a scan that finds none waits, in
/// order, its client paused, until one is free.
final class ClamdPool {
    let settings: ClamdSettings
    private unowned let worker: Worker
    private var active = 0
    private var waiting: [WeakScan] = []
    /// When a failure was last written to the error log (one line per scanner per second).
    private var lastFailureLog: Int64 = -1_000

    private struct WeakScan {
        weak var scan: ClamdScan?
    }

    init(settings: ClamdSettings, worker: Worker) {
        self.settings = settings
        self.worker = worker
    }

    /// `scan` wants a connection: it gets one now (`ClamdScan.connect`) or when one is free.
    func acquire(for scan: ClamdScan) {
        guard active < settings.connections else {
            waiting.append(WeakScan(scan: scan))
            return
        }
        active += 1
        scan.connect(worker.base)
    }

    /// A scan gave its connection back: the next one waiting (and still wanted) gets it.
    func release() {
        active -= 1
        while !waiting.isEmpty {
            guard let next = waiting.removeFirst().scan else { continue }
            active += 1
            next.connect(worker.base)
            progressed()
            return
        }
    }

    /// A scan can take more bytes, or decided early: paused clients look again.
    func progressed() {
        worker.progressNotifier?.notify()
    }

    /// The worker's loop.
    var base: EventBase { worker.base }

    /// The loop's clock, in milliseconds.
    func now() -> Int64 { monotonicMilliseconds() }

    /// A scan answered after `milliseconds` (`formgate_scan_duration_seconds`).
    func scanned(milliseconds: Int64) {
        worker.metrics.update { $0.scanDuration.observe(Double(milliseconds) / 1000) }
    }

    /// A scan failed: the error log says why (at most once a second per scanner and worker).
    func failed(_ detail: String) {
        let now = monotonicMilliseconds()
        guard now - lastFailureLog >= 1_000 else { return }
        lastFailureLog = now
        ErrorLog.shared.write(.warn, "scanner \(settings.name): \(detail)")
    }
}

/// A worker's scanner pools (`InspectionStreams`), one per configured scanner, made when a file
/// first needs it. `@unchecked Sendable`: it sits in the worker's rule tools and is used on the
/// worker's loop alone.
final class Scanners: InspectionStreams, @unchecked Sendable {
    private unowned let worker: Worker
    private var pools: [ClamdSettings: ClamdPool] = [:]

    init(worker: Worker) {
        self.worker = worker
    }

    func open(_ inspection: any FileInspection, part: PartLogRecord) -> any InspectionStream {
        guard let rule = inspection as? ScanRule else {
            preconditionFailure("an inspection FormGate does not know")
        }
        let pool: ClamdPool
        if let existing = pools[rule.scanner] {
            pool = existing
        } else {
            pool = ClamdPool(settings: rule.scanner, worker: worker)
            pools[rule.scanner] = pool
        }
        return ClamdScan(rule: rule, pool: pool, part: part)
    }
}
