import EventLoop
import HTTP1
import HTTPCore
import ProxyCore
import Resumable
import UploadRules

#if canImport(Glibc)
    import Glibc
#endif

/// A `tus:` route's local handler in one worker: reads each request (`TusRequest`), queues its
/// store work on the upload's store thread (`TusService`), and builds the answers. One per
/// route and worker: it wakes its worker's loop when a job is done, and delivers completed
/// uploads through its worker (`Worker.deliver`).
final class TusHandler: LocalHandler, @unchecked Sendable {
    let service: TusService
    let settings: TusSettings
    /// The route as configured (its rules judge a file's first bytes; its delivery route
    /// forwards the upload).
    let route: Route
    /// `Tus-Max-Size`: the route's `max_size`, within the server's `limits.file_bytes`.
    let maxSize: Int64
    unowned let worker: Worker
    private let notifier: Notifier
    let metrics: Metrics

    /// What the route's deliveries run with (`TusDelivery`).
    let deliverySettings: ProxySettings

    init(
        service: TusService, route: Route, settings: TusSettings, maxFileBytes: Int64, worker: Worker,
        notifier: Notifier, deliverySettings: ProxySettings
    ) {
        self.service = service
        self.deliverySettings = deliverySettings
        self.route = route
        self.settings = settings
        self.maxSize = min(settings.maxSize, maxFileBytes)
        self.worker = worker
        self.notifier = notifier
        self.metrics = worker.metrics
    }

    /// Wakes the worker's loop (from any thread): the operations there look at their mailboxes.
    func wake() { notifier.notify() }

    /// The expiry of an upload touched now (unix seconds).
    func expiry() -> Int64 { Self.unixSeconds() + settings.expireAfterMilliseconds / 1000 }

    static func unixSeconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec)
    }

    // MARK: Requests

    func responder(for request: LocalRequest) -> any LocalResponder {
        let head = request.head
        let path = String(head.path.prefix { $0 != "?" })
        let base = locationBase(request)
        let kind: TusRequest
        do throws(TusRequest.Refusal) {
            kind = try TusRequest.read(
                method: head.method, path: path, headers: head.headers, prefix: route.pathPrefix,
                maxSize: maxSize)
        } catch {
            let operation = TusOperation(handler: self, request: request, kind: nil, locationBase: base)
            operation.post(.answer(answer(TusAnswers.refusal(error), event: nil, info: nil)))
            return TusResponder(operation: operation)
        }
        let operation = TusOperation(handler: self, request: request, kind: kind, locationBase: base)
        start(kind, operation)
        return TusResponder(operation: operation)
    }

    /// `Location`'s base: the scheme and host the client used, then the route's path.
    private func locationBase(_ request: LocalRequest) -> String {
        let headers = request.head.headers
        var scheme = request.secure ? "https" : "http"
        var host = headers.firstValue("Host").map { String(decoding: $0, as: UTF8.self) } ?? "localhost"
        if settings.trustForwarded {
            if let proto = headers["X-Forwarded-Proto"], proto == "https" || proto == "http" {
                scheme = proto
            }
            if let forwarded = headers["X-Forwarded-Host"], Self.isHost(forwarded) { host = forwarded }
        }
        if !Self.isHost(host) { host = "localhost" }
        return "\(scheme)://\(host)\(route.pathPrefix)"
    }

    /// A Host value safe to put in a URL (letters, digits, `.-:[]_`).
    static func isHost(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 255
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"),
                    UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: "_"):
                    return true
                default: return false
                }
            }
    }

    private func start(_ kind: TusRequest, _ operation: TusOperation) {
        switch kind {
        case .options:
            operation.post(.answer(answer(TusAnswers.options(maxSize: maxSize), event: nil, info: nil)))
        case .head(let id):
            service.submit(id) { [self] in operation.post(.answer(headAnswer(id, operation))) }
        case .delete(let id):
            service.submit(id) { [self] in operation.post(.answer(terminate(id, operation))) }
        case .patch(let patch):
            service.submit(patch.id) { [self] in openPatch(patch, operation) }
        case .create(let creation):
            let id: UploadID
            if case .final(let parts) = creation.concat {
                id = UploadID.final(of: parts, owner: operation.owner, metadata: creation.metadata)
            } else {
                id = UploadID.random()
            }
            service.submit(id) { [self] in create(id, creation, operation) }
        }
    }

    // MARK: Store jobs (on the upload's store thread)

    private func headAnswer(_ id: UploadID, _ operation: TusOperation) -> LocalAnswer {
        do throws(StoreError) {
            let visible = TusAnswers.visible(
                try service.store.info(id), to: operation.owner, now: Self.unixSeconds())
            guard let info = visible else { return notFound() }
            return answer(TusAnswers.head(info, locationBase: operation.locationBase), event: nil, info: info)
        } catch {
            return storeFailure(error, nil)
        }
    }

    private func terminate(_ id: UploadID, _ operation: TusOperation) -> LocalAnswer {
        do throws(StoreError) {
            guard
                let info = TusAnswers.visible(
                    try service.store.info(id), to: operation.owner, now: Self.unixSeconds())
            else { return notFound() }
            service.supersedeWriter(of: id)
            try service.store.delete(id)
            service.forget(id)
            metrics.tus(route: route.name, event: "terminated", bytes: 0)
            return answer(TusAnswers.terminated(), event: "terminated", info: info)
        } catch {
            return storeFailure(error, nil)
        }
    }

    private func openPatch(_ patch: TusRequest.Patch, _ operation: TusOperation) {
        do throws(StoreError) {
            guard
                let info = TusAnswers.visible(
                    try service.store.info(patch.id), to: operation.owner, now: Self.unixSeconds())
            else { return operation.post(.answer(notFound())) }
            let plan: TusAnswers.PatchPlan
            do throws(TusRequest.Refusal) {
                plan = try TusAnswers.checkPatch(
                    patch, info, declaredBytes: declaredBytes(operation.request.head))
            } catch {
                return operation.post(.answer(answer(TusAnswers.refusal(error), event: nil, info: info)))
            }
            switch plan {
            case .complete:
                operation.post(.complete(info, try service.store.answer(patch.id)))
            case .write(let planned):
                try openSession(planned, checksum: patch.checksum, operation)
            }
        } catch {
            operation.post(.answer(storeFailure(error, nil)))
        }
    }

    /// Makes `operation` the upload's writer and opens its session.
    private func openSession(
        _ info: UploadInfo, checksum: TusRequest.Checksum?, _ operation: TusOperation
    ) throws(StoreError) {
        let route = route.name
        let work = PatchWork(id: info.id) { [metrics] in metrics.tusWriters(route: route, delta: -1) }
        service.claim(work)
        do throws(StoreError) {
            work.session = try PatchSession(store: service.store, info: info, checksum: checksum)
        } catch {
            service.release(work)
            throw error
        }
        metrics.tusWriters(route: route, delta: 1)
        operation.post(.opened(info, work))
    }

    private func create(_ id: UploadID, _ creation: TusRequest.Creation, _ operation: TusOperation) {
        let now = Self.unixSeconds()
        var info = UploadInfo(
            id: id, length: creation.length, offset: 0, metadata: creation.metadata, owner: operation.owner,
            createdAt: now, expiresAt: expiry(), concatenation: .none)
        do throws(StoreError) {
            switch creation.concat {
            case .none: break
            case .partial: info.concatenation = .partial
            case .final(let parts):
                if let existing = try service.store.info(id) {
                    // The same final creation again (its answer was lost): the upload it made.
                    if let visible = TusAnswers.visible(existing, to: operation.owner, now: now) {
                        return operation.post(.complete(visible, try service.store.answer(id)))
                    }
                    try service.store.delete(id)
                    service.forget(id)
                }
                info.concatenation = .final(parts)
                if let refusal = try concatenate(parts, into: &info, owner: operation.owner) {
                    return operation.post(.answer(refusal))
                }
            }
            if case .none = info.concatenation, let refusal = typeRefusal(info, firstBytes: nil),
                judgeWindow(info) == 0
            {
                return operation.post(.answer(self.refusal(415, refusal.description, nil)))
            }
            if case .final = info.concatenation {
                // Its bytes are there already (copied from the partials): committed with the record.
            } else {
                try service.store.create(info)
            }
            metrics.tus(route: route.name, event: "created", bytes: 0)
            if creation.withBody, !info.isComplete {
                try openSession(info, checksum: creation.checksum, operation)
            } else if info.isDeliverable {
                operation.post(.complete(info, nil))
            } else {
                operation.post(.answer(progressAnswer(info, of: operation)))
            }
        } catch {
            operation.post(.answer(storeFailure(error, nil)))
        }
    }

    /// Copies complete partial uploads of `owner` into the final upload `info` (its length is
    /// their sum); a refusal when one is missing, someone else's, not partial or not complete.
    private func concatenate(
        _ parts: [UploadID], into info: inout UploadInfo, owner: String?
    ) throws(StoreError) -> LocalAnswer? {
        var partials: [UploadInfo] = []
        for id in parts {
            guard
                let part = TusAnswers.visible(try service.store.info(id), to: owner, now: Self.unixSeconds())
            else {
                return refusal(404, "a partial upload of Upload-Concat does not exist", nil)
            }
            guard case .partial = part.concatenation, part.isComplete else {
                return refusal(
                    400, "Upload-Concat names an upload that is not a complete partial upload", nil)
            }
            partials.append(part)
        }
        let length = partials.reduce(Int64(0)) { $0 + ($1.length ?? 0) }
        guard length <= maxSize else {
            return refusal(413, "the concatenated upload is over Tus-Max-Size", nil)
        }
        info.length = length
        try service.store.create(info)
        let writer = try service.store.open(info.id)
        defer { writer.close() }
        for part in partials {
            var offset: Int64 = 0
            while offset < part.offset {
                let chunk = try service.store.read(part.id, at: offset, count: 1 << 20)
                guard !chunk.isEmpty else { throw .corrupt(part.id, "its bytes end before its offset") }
                let failure: StoreError? = chunk.withUnsafeBytes { buffer in
                    do throws(StoreError) {
                        try writer.append(buffer)
                        return nil
                    } catch {
                        return error
                    }
                }
                if let failure { throw failure }
                offset += Int64(chunk.count)
            }
        }
        try writer.sync()
        info.offset = length
        try service.store.commit(info)
        return nil
    }

    private func declaredBytes(_ head: RequestHead) -> Int64? {
        head.headers["Content-Length"].flatMap { TusHeaders.nonNegativeInteger(Array($0.utf8)) }
    }
}

/// A tus request as the exchange drives it: the operation's room and answer, its events.
struct TusResponder: LocalResponder {
    let operation: TusOperation

    var room: Int { operation.room }
    var answer: LocalAnswer? { operation.answer }

    mutating func body(_ bytes: UnsafeRawBufferPointer, now: Int64) { operation.body(bytes) }

    mutating func end(now: Int64) { operation.end() }

    var tusLog: TusLog? { operation.log }

    var live: LocalLive? { operation.live }
}
