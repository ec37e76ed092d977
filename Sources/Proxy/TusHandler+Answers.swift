import HTTPCore
import ProxyCore
import Resumable
import UploadRules

extension TusHandler {
    // MARK: Answers

    /// A protocol answer as the exchange sends it, with the log's `tus` object.
    func answer(_ answer: TusAnswers.Answer, event: String?, info: UploadInfo?) -> LocalAnswer {
        var body: [UInt8] = []
        var headers = answer.headers
        if let reason = answer.reason {
            body = Array("\(answer.status) \(ProxyError.reasonPhrase(answer.status)): \(reason)\n".utf8)
            headers.append(name: "Content-Type", value: "text/plain; charset=utf-8")
        }
        return LocalAnswer(
            status: answer.status, headers: headers, body: body, tus: log(event, info), error: answer.reason)
    }

    private func log(_ event: String?, _ info: UploadInfo?) -> TusLog {
        TusLog(event: event, id: info?.id.hex, offset: info?.offset, length: info?.length)
    }

    /// A refusal: `status` and a reason for the body and the log.
    func refusal(_ status: Int, _ reason: String, _ info: UploadInfo?) -> LocalAnswer {
        answer(TusAnswers.refusal(TusRequest.Refusal(status, reason)), event: nil, info: info)
    }

    /// 404: no such upload for this identity (expired, deleted, never created, someone else's).
    func notFound() -> LocalAnswer { refusal(404, "no such upload", nil) }

    /// A store call failed: 507 when the disk is full, 423 when another replica holds the
    /// upload, else 500 (logged).
    func storeFailure(_ error: StoreError, _ info: UploadInfo?) -> LocalAnswer {
        switch error {
        case .full:
            return refusal(507, "the upload store is full", info)
        case .locked:
            return refusal(423, "another request writes this upload now", info)
        case .corrupt(let id, let reason):
            ErrorLog.shared.write(.error, "tus store \(service.directory): upload \(id) unusable: \(reason)")
        case .io(let call, let code):
            ErrorLog.shared.write(.error, "tus store \(service.directory): \(call) failed (errno \(code))")
        }
        return refusal(500, "the upload store failed", info)
    }

    /// Bytes could not be written: past the length 413, else as `storeFailure`.
    func writeFailure(_ error: PatchSession.WriteFailure, _ info: UploadInfo?) -> LocalAnswer {
        switch error {
        case .pastLength: refusal(413, "the bytes go past Upload-Length", info)
        case .store(let failure): storeFailure(failure, info)
        }
    }

    /// The answer to a request whose bytes (if any) are committed and the upload not complete.
    func progressAnswer(_ info: UploadInfo, of operation: TusOperation) -> LocalAnswer {
        switch operation.kind {
        case .create(let creation)?:
            return answer(
                TusAnswers.created(info, locationBase: operation.locationBase, withBody: creation.withBody),
                event: "created", info: info)
        default:
            return answer(TusAnswers.patched(info), event: "patched", info: info)
        }
    }

    /// The answer to the request that completed an upload (or retried its completion): the
    /// upstream's status and body with `Upload-Offset` (a creation keeps its 201 and `Location`
    /// when the upstream accepted the upload), or why the delivery failed.
    func completionAnswer(_ info: UploadInfo, _ outcome: DeliveryOutcome, of operation: TusOperation)
        -> LocalAnswer
    {
        var headers = HeaderFields()
        headers.append(name: "Tus-Resumable", value: TusHeaders.version)
        headers.append(name: "Upload-Offset", value: String(info.offset))
        var creates = false
        if case .create? = operation.kind {
            creates = true
            headers.append(name: "Location", value: operation.locationBase + "/" + info.id.hex)
        }
        switch outcome {
        case .answered(let stored):
            if let type = stored.contentType { headers.append(name: "Content-Type", value: type) }
            let status = creates && (200..<300).contains(stored.status) ? 201 : stored.status
            return LocalAnswer(
                status: status, headers: headers, body: status == 204 ? [] : stored.body,
                tus: log("completed", info))
        case .failed(let status, let reason):
            if status == 503 { headers.append(name: "Retry-After", value: "5") }
            headers.append(name: "Content-Type", value: "text/plain; charset=utf-8")
            return LocalAnswer(
                status: status, headers: headers,
                body: Array("\(status) \(ProxyError.reasonPhrase(status)): \(reason)\n".utf8),
                tus: log(creates ? "created" : "patched", info), error: reason)
        }
    }

    // MARK: The type rules at the file's first bytes

    /// How many first bytes of the file the type rules wait for before this upload's bytes may
    /// be stored: nil when nothing is judged here (no type rules, not at the file's start, a
    /// partial upload), 0 when the declared type alone decides.
    func judgeWindow(_ info: UploadInfo) -> Int? {
        let rules = route.rules
        let mismatchRefused = rules.sniff?.policy == .rejectMismatch
        guard info.offset == 0, mismatchRefused || !rules.allowTypes.isEmpty else { return nil }
        guard case .none = info.concatenation else { return nil }
        guard let sniff = rules.sniff else { return 0 }
        guard let length = info.length else { return sniff.bytes }
        return Int(min(Int64(sniff.bytes), length))
    }

    /// The type rules' refusal of the upload's file, judged on its declared type (the
    /// `filetype` metadata, as the delivery declares it) and, when given and sniffing, its
    /// first bytes. Called with bytes only on the loop thread (the sniffer is the loop's).
    func typeRefusal(_ info: UploadInfo, firstBytes: [UInt8]?) -> RuleRefusal? {
        let rules = route.rules
        let declared = DeliveryForm.fileType(info.metadata["filetype"])
        var sniffed: String?
        if let firstBytes, !firstBytes.isEmpty, let rule = rules.sniff {
            sniffed = worker.ruleTools.sniffer?.sniff(firstBytes)
            if let sniffed, rule.policy == .rejectMismatch,
                let mismatch = rules.typeMismatch(
                    part: settings.fileField, declared: declared, sniffed: sniffed)
            {
                return mismatch
            }
        }
        return rules.typeNotAllowed(part: settings.fileField, declared: declared, sniffed: sniffed)
    }

    // MARK: Delivery and metrics

    /// Delivers `info` (complete) upstream, or joins the delivery under way; `done` hears the
    /// outcome (on any thread). An answer other than a 5xx is stored before anyone hears it.
    func deliver(
        _ info: UploadInfo, for operation: TusOperation, _ done: @escaping @Sendable (DeliveryOutcome) -> Void
    ) {
        let service = service
        switch service.joinDelivery(info.id, waiter: done) {
        case .busy: return done(.failed(status: 503, reason: "too many deliveries at once"))
        case .wait: return
        case .stored:
            return service.submit(info.id) {
                guard let stored = try? service.store.answer(info.id) else {
                    return done(.failed(status: 500, reason: "the upload's stored answer could not be read"))
                }
                done(.answered(stored))
            }
        case .run: break
        }
        let route = route.name
        let metrics = metrics
        worker.deliver(info, handler: self, request: operation.request) { outcome in
            guard case .answered(let stored) = outcome, stored.status < 500 else {
                return service.submit(info.id) {
                    service.store.endDelivery(info.id)
                    service.deliveryEnded(info.id, outcome)
                }
            }
            service.submit(info.id) {
                do throws(StoreError) {
                    try service.store.storeAnswer(stored, for: info.id)
                } catch {
                    ErrorLog.shared.write(
                        .error,
                        "tus store \(service.directory): the answer to upload \(info.id) was not stored: \(error)"
                    )
                }
                // The answer is stored: another replica may look now, and finds it.
                service.store.endDelivery(info.id)
                metrics.tus(route: route, event: "completed", bytes: 0)
                service.deliveryEnded(info.id, outcome)
            }
        }
    }
}
