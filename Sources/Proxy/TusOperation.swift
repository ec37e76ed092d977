import HTTPCore
import ProxyCore
import Resumable
import Synchronization
import UploadRules

/// One tus request on its way through the store: the loop side of it (what the exchange reads:
/// `room` and `answer`), and the jobs it queues on its upload's store thread, whose results
/// come back through a mailbox and a wake-up of the worker's loop.
///
/// Bytes move with backpressure: the exchange hands over at most `room`, which is what the
/// store thread has not yet written of a fixed window, so a PATCH holds at most `window` bytes
/// in memory whatever its size. A PATCH that ends (or is dropped) before its body did keeps
/// what was written: its last job syncs and records the offset.
final class TusOperation: @unchecked Sendable {
    /// Bytes handed to the store thread and not yet written, at most.
    static let window = 512 * 1024
    /// Body bytes gathered before they go to the store thread as one write (one job, one
    /// wake-up of the loop when it is done).
    static let batch = 128 * 1024

    /// What a store job reports.
    enum Event {
        /// The request is answered (a refusal, or an answer that needs no more work).
        case answer(LocalAnswer)
        /// The upload is open for this request's bytes, under this record.
        case opened(UploadInfo, PatchWork)
        /// This request's bytes are committed (or refused by the checksum).
        case finished(PatchSession.Outcome)
        /// The upload had all its bytes already: the stored answer, or none (deliver again).
        case complete(UploadInfo, StoredAnswer?)
        /// The delivery ended.
        case delivered(UploadInfo, DeliveryOutcome)
    }

    struct Mailbox {
        var events: [Event] = []
        /// Bytes queued for writing and not written yet.
        var pending = 0
        /// A write failed: the answer.
        var writeFailure: LocalAnswer?
    }

    let handler: TusHandler
    let request: LocalRequest
    /// What the request asks for (nil when it was refused before).
    let kind: TusRequest?
    /// `identity` as an upload's owner.
    let owner: String?
    /// The `Upload-Offset` of the response's `Location` base (scheme, host and route prefix).
    let locationBase: String
    private let mailbox = Mutex(Mailbox())

    // Loop thread only.
    private(set) var currentAnswer: LocalAnswer?
    /// The session taking this request's bytes, once opened.
    private var work: PatchWork?
    /// The record the bytes are written under.
    private var info: UploadInfo?
    private var bodyEnded = false
    private var finishing = false
    /// The file's first bytes, held until the type rules decided (`judge`).
    private var held: [UInt8] = []
    /// Body bytes gathered for the next write (at most `batch`).
    private var staged: [UInt8] = []
    /// How many first bytes the type rules still wait for (nil: decided, or nothing to decide).
    private var judgeWindow: Int?
    /// The upload's offset when this request opened it (the live view adds the bytes read).
    private var openedOffset: Int64?
    /// Whether the complete upload is being delivered upstream (the live view's stage).
    private(set) var delivering = false

    init(handler: TusHandler, request: LocalRequest, kind: TusRequest?, locationBase: String) {
        self.handler = handler
        self.request = request
        self.kind = kind
        self.owner = request.identity.map { "\($0.method.rawValue):\($0.subject)" }
        self.locationBase = locationBase
    }

    deinit {
        // Dropped before its bytes were committed (the client went away, a timeout): what was
        // written is kept, and the upload is free for the next PATCH.
        guard let work, !finishing else { return }
        let service = handler.service
        let expiresAt = handler.expiry()
        let staged = staged
        service.submit(work.id) {
            if let session = work.session, !work.superseded {
                // What arrived is kept, the bytes gathered for the next write included.
                let written = staged.withUnsafeBytes { buffer in
                    do throws(PatchSession.WriteFailure) {
                        try session.write(buffer)
                        return true
                    } catch {
                        return false
                    }
                }
                if !written { try? session.abandon() }
                _ = try? session.finish(bodyComplete: false, expiresAt: expiresAt)
            }
            work.session = nil
            service.release(work)
        }
    }

    // MARK: What the exchange reads

    var room: Int {
        poll()
        if currentAnswer != nil || bodyEnded { return 0 }
        // A request that stores no bytes reads and drops any body it has.
        if work == nil, !expectsBytes { return Int.max / 2 }
        guard work != nil else { return 0 }
        let pending = mailbox.withLock { $0.pending }
        return max(0, Self.window - pending - staged.count)
    }

    var answer: LocalAnswer? {
        poll()
        return currentAnswer
    }

    /// The log's `tus` object for a request that ended unanswered: the upload and where it
    /// stood when this request had it.
    var log: TusLog? {
        let id: UploadID?
        switch kind {
        case .head(let upload)?, .delete(let upload)?: id = upload
        case .patch(let patch)?: id = patch.id
        default: id = info?.id
        }
        return TusLog(event: nil, id: (info?.id ?? id)?.hex, offset: info?.offset, length: info?.length)
    }

    /// The upload for the live view, once the store opened it.
    var live: LocalLive? {
        info.map { LocalLive(offset: openedOffset ?? $0.offset, length: $0.length, delivering: delivering) }
    }

    /// Whether the request's body is an upload's bytes (a PATCH, a creation with upload).
    private var expectsBytes: Bool {
        switch kind {
        case .patch?: return true
        case .create(let creation)?: return creation.withBody
        default: return false
        }
    }

    // MARK: Events from the exchange

    func body(_ bytes: UnsafeRawBufferPointer) {
        guard currentAnswer == nil, let work else { return }
        if let window = judgeWindow {
            let taken = min(window, bytes.count)
            held.append(contentsOf: bytes.prefix(taken))
            judgeWindow = window - taken
            if judgeWindow == 0 {
                guard judge() else { return }
            }
            if taken < bytes.count { stage(UnsafeRawBufferPointer(rebasing: bytes[taken...]), for: work) }
            return
        }
        stage(bytes, for: work)
    }

    /// Gathers body bytes; a full batch goes to the store thread.
    private func stage(_ bytes: UnsafeRawBufferPointer, for work: PatchWork) {
        if staged.isEmpty { staged.reserveCapacity(Self.batch) }
        staged.append(contentsOf: bytes)
        if staged.count >= Self.batch { flushStaged(work) }
    }

    /// Sends the gathered bytes to the store thread.
    private func flushStaged(_ work: PatchWork) {
        guard !staged.isEmpty else { return }
        let bytes = staged
        staged = []
        write(bytes, to: work)
    }

    func end() {
        bodyEnded = true
        finishIfEnded()
    }

    /// The body ended and the session is open (in either order): commits the bytes.
    private func finishIfEnded() {
        guard bodyEnded, !finishing, currentAnswer == nil, let work else { return }
        if judgeWindow != nil, !held.isEmpty {
            guard judge() else { return }
        }
        flushStaged(work)
        finishing = true
        let service = handler.service
        let expiresAt = handler.expiry()
        let record = info
        service.submit(work.id) { [self] in
            guard let session = work.session, !work.superseded else {
                service.release(work)
                return post(.answer(handler.refusal(409, "another request took over this upload", record)))
            }
            work.session = nil
            let outcome: PatchSession.Outcome
            do throws(StoreError) {
                outcome = try session.finish(bodyComplete: true, expiresAt: expiresAt)
            } catch {
                service.release(work)
                return post(.answer(handler.storeFailure(error, record)))
            }
            service.release(work)
            post(.finished(outcome))
        }
    }

    // MARK: Mailbox

    /// Called from store threads and deliveries: queues `event` and wakes the loop.
    func post(_ event: Event) {
        mailbox.withLock { $0.events.append(event) }
        handler.wake()
    }

    /// Handles what the jobs reported (loop thread).
    private func poll() {
        let (events, failure) = mailbox.withLock { box in
            defer {
                box.events.removeAll()
                box.writeFailure = nil
            }
            return (box.events, box.writeFailure)
        }
        if let failure, currentAnswer == nil {
            finishing = true
            currentAnswer = failure
        }
        for event in events { handle(event) }
    }

    private func handle(_ event: Event) {
        guard currentAnswer == nil else { return }
        switch event {
        case .answer(let answer):
            finishing = true
            currentAnswer = answer
        case .opened(let opened, let opening):
            info = opened
            openedOffset = opened.offset
            work = opening
            judgeWindow = handler.judgeWindow(opened)
            if judgeWindow == 0 {
                judgeWindow = nil
                if let refusal = handler.typeRefusal(opened, firstBytes: nil) { return refuse(refusal) }
            }
            // An empty body ended before the session opened.
            finishIfEnded()
        case .finished(.checksumMismatch):
            currentAnswer = handler.refusal(460, "Upload-Checksum does not match the bytes", info)
        case .finished(.committed(let committed)):
            handler.metrics.tus(
                route: request.route, event: "patched", bytes: committed.offset - (info?.offset ?? 0))
            info = committed
            if committed.isDeliverable {
                deliver(committed)
            } else {
                currentAnswer = handler.progressAnswer(committed, of: self)
            }
        case .complete(let complete, let stored):
            info = complete
            if !complete.isDeliverable {
                // A partial upload is never delivered on its own: its last PATCH again.
                currentAnswer = handler.progressAnswer(complete, of: self)
            } else if let stored {
                currentAnswer = handler.completionAnswer(complete, .answered(stored), of: self)
            } else {
                deliver(complete)
            }
        case .delivered(let delivered, let outcome):
            currentAnswer = handler.completionAnswer(delivered, outcome, of: self)
        }
    }

    /// The upload is complete: deliver it (or join the delivery under way).
    private func deliver(_ complete: UploadInfo) {
        delivering = true
        handler.deliver(complete, for: self) { [self] outcome in post(.delivered(complete, outcome)) }
    }

    // MARK: Bytes

    private func write(_ bytes: [UInt8], to work: PatchWork) {
        guard !bytes.isEmpty else { return }
        mailbox.withLock { $0.pending += bytes.count }
        let record = info
        handler.service.submit(work.id) { [self] in
            var failure: LocalAnswer?
            if let session = work.session, !work.superseded {
                let refused: PatchSession.WriteFailure? = bytes.withUnsafeBytes { buffer in
                    do throws(PatchSession.WriteFailure) {
                        try session.write(buffer)
                        return nil
                    } catch {
                        return error
                    }
                }
                if let refused {
                    failure = handler.writeFailure(refused, record)
                    try? session.abandon()
                    work.session = nil
                    handler.service.release(work)
                }
            }
            mailbox.withLock { box in
                box.pending -= bytes.count
                if let failure, box.writeFailure == nil { box.writeFailure = failure }
            }
            handler.wake()
        }
    }

    /// The type rules decide on the held first bytes; true when the file may go on (the held
    /// bytes are queued), false when it is refused (the request is answered, its bytes dropped).
    private func judge() -> Bool {
        judgeWindow = nil
        guard let info, let work else { return false }
        if let refusal = handler.typeRefusal(info, firstBytes: held) {
            refuse(refusal)
            return false
        }
        let first = held
        held = []
        first.withUnsafeBytes { stage($0, for: work) }
        return true
    }

    /// Refuses the upload's bytes: nothing this request sent is kept.
    private func refuse(_ refusal: RuleRefusal) {
        finishing = true
        currentAnswer = handler.refusal(415, refusal.description, info)
        guard let work else { return }
        let service = handler.service
        service.submit(work.id) {
            try? work.session?.abandon()
            work.session = nil
            service.release(work)
        }
    }
}
