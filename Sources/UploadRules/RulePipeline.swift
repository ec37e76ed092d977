public import HTTPCore
import Inspection
public import MultipartEncoding
public import MultipartParsing

/// Applies a route's rules to parser events as they stream and re-encodes the result under a
/// fresh boundary into `sink`. Holds nothing of a part's content; records each part for the
/// access log.
///
/// It never waits. A large file part is hashed on a `DigestPool`'s threads (when a
/// `DigestQueue` is given); when it ends before its digests are ready, the pipeline holds: its
/// digest fields and everything after them are kept in order (`heldBytes`) until `resume()`,
/// called on the loop thread after the queue's signal, releases them (see `RulePipeline+Holds`).
/// A file the route inspects (`FileInspection`) holds its final byte and everything after it
/// the same way until `decide` brings its verdict.
public struct RulePipeline<Sink: ByteSink>: MultipartEventHandler {
    /// One forwarded (or dropped) part, for the access log.
    public typealias PartRecord = PartLogRecord

    /// Why the rules refused the request (a reason, not a status).
    public typealias Refusal = RuleRefusal

    /// Where the re-encoded body goes; may be replaced between feeds by a sink that continues
    /// the same stream (held bytes go to the sink set when `resume()` releases them).
    public var sink: Sink {
        get { output.sink }
        set { output.sink = newValue }
    }
    /// With `fieldsFirst`: where file parts and the closing delimiter go. The body is `sink`'s
    /// bytes then `deferred`'s, without the first two bytes (the encoder's leading CRLF).
    public var deferred: Sink? {
        get { output.deferred }
        set { output.deferred = newValue }
    }
    /// Whether the parts are split between `sink` and `deferred`.
    public var splitsFiles: Bool { rules.fieldsFirst }
    /// The sinks, and the bytes held behind pending holds.
    var output: PipelineOutput<Sink>
    /// The encoder (its `contentType` names the new boundary).
    public internal(set) var encoder: MultipartEncoder
    /// Parts seen so far.
    public internal(set) var records: [PartRecord] = []
    /// Names of injected fields.
    public internal(set) var injected: [String] = []
    /// The providers that ran (`TokenProvider.kind`), in order, for the access log.
    public internal(set) var providers: [String] = []
    /// The value of the last injected field named `key` (the object key a store gets).
    public internal(set) var objectKey: String?
    /// Set when a rule refuses the request; the caller stops and answers with the status
    /// the proxy maps `refusal.reason` to.
    public internal(set) var refusal: Refusal?
    /// Where the first forwarded file's content begins: its offset in the client's body and
    /// in the re-encoded one (set once the file's head is written).
    public private(set) var fileContent: (input: Int64, output: Int64)?
    /// The re-encoded body's length when it was declared before the body ended (a
    /// `Content-Length` sent upstream ahead of the file): the closing delimiter is then
    /// followed by exactly the bytes that make the body this long (see `declareLength`).
    public internal(set) var declaredLength: Int64?
    /// Every byte the pipeline has written so far, held ones included.
    public var writtenBytes: Int64 { output.written }

    let rules: RuleSet
    let headers: HeaderFields
    let now: Int64
    /// The template values every part starts from (time, date, request headers).
    let requestValues: TemplateValues
    var random = SecureRandom()
    var dropping = false
    var digests: PartDigests?
    /// The last file's digests, hashed inline and reset (`PartDigests.reuse`), for the next file.
    var spareDigests: PartDigests?
    /// Where large parts are hashed (nil: every part is hashed inline).
    let hashing: DigestQueue?
    /// Holds not yet released, in output order.
    var holds: [PendingHold] = []
    var nextHold = 0
    /// The current file part is inspected (`RuleSet.inspection`): its last byte so far is kept
    /// back (`keptBack`) until the next bytes or the part's end, where a hold gates it.
    var inspecting = false
    var keptBack: UInt8?
    /// Where the inspected file's bytes go (nil: the loop cannot inspect; its verdict is then
    /// a failure).
    var inspected: (any InspectionStream)?
    /// The loop's means of inspecting files.
    let inspectors: (any InspectionStreams)?
    /// The current file's `strip_metadata` transform (nil: the part is not stripped).
    var stripper: MetadataStripper?
    /// The stripper's output for one read, reused from read to read.
    var stripPieces = StripPieces()
    /// Inspected files that ended and whose verdicts are wanted (`takeVerdictRequests()`).
    var verdictRequests: [FileVerdictRequest] = []
    var emittedFirst = false
    var pendingBefore: [Int]
    /// `limits.file_bytes` (what providers put in their policies).
    let maxFileBytes: Int64
    /// A file part has been forwarded (for `RuleSet.fileLast`).
    var fileForwarded = false
    let sniffer: Sniffer?
    /// A file part whose head waits for the sniff window.
    var held: HeldPart?
    var lookahead: [UInt8] = []
    /// With `borrowsInput`: the sniff window's bytes so far, where the current feed has them.
    var borrowed: UnsafeRawBufferPointer?
    /// Whether the caller calls `inputEnds()` after every feed, so the sniff window may refer
    /// to the bytes being fed instead of copying them (until the part ends or the feed does).
    public var borrowsInput = false
    /// The buffers of the last part head's fields, reused by the next one.
    var headScratch = HeaderFields()

    struct HeldPart {
        var head: PartHead
        var name: String
        var values: TemplateValues
        var safeName: String
        var renamed: Bool
    }

    /// Creates a pipeline for one request.
    ///
    /// - Parameters:
    ///   - headers: the request's headers (for `{header:NAME}`).
    ///   - identity: who sent the request, when the route authenticates (`{auth:…}`).
    ///   - maxFileBytes: `limits.file_bytes`, for the providers' policies.
    ///   - now: Unix seconds (for `{date}`, `{time}` and token deadlines).
    ///   - sniffer: the worker's sniffer (one per thread); a new one when `nil` and sniffing.
    ///   - hashing: the loop thread's hashing queue; with it, large file parts are hashed off
    ///     the loop and the pipeline may hold (the caller must then call `resume()` after the
    ///     queue's signal). Without it, every part is hashed inline and nothing is held.
    ///   - inspectors: the loop's inspection streams (`RuleSet.inspection`); without them, an
    ///     inspected file's verdict is a failure.
    ///   - buffers: an earlier pipeline's (`takeBuffers()`), reused.
    public init(
        rules: RuleSet, sink: Sink, headers: HeaderFields, now: Int64, identity: Identity? = nil,
        maxFileBytes: Int64 = 4 << 30, sniffer: Sniffer? = nil, hashing: DigestQueue? = nil,
        inspectors: (any InspectionStreams)? = nil, boundary: Boundary = .random(),
        buffers: consuming Buffers = Buffers()
    ) {
        self.inspectors = inspectors
        self.maxFileBytes = maxFileBytes
        self.rules = rules
        self.sniffer = rules.sniff == nil ? nil : (sniffer ?? Sniffer())
        self.output = PipelineOutput(sink: sink)
        self.hashing = hashing
        self.headers = headers
        self.now = now
        var values = TemplateValues()
        values.time = now
        values.date = Self.date(now)
        values.request = TemplateRequest.reusing(&buffers.request, headers: headers, identity: identity)
        self.requestValues = values
        var scratch: [UInt8] = []
        swap(&scratch, &buffers.encoderScratch)
        self.encoder = MultipartEncoder(
            boundary: boundary, leadingLineBreak: rules.fieldsFirst, scratch: consume scratch)
        swap(&self.lookahead, &buffers.lookahead)
        swap(&self.headScratch, &buffers.headScratch)
        swap(&self.records, &buffers.records)
        swap(&self.injected, &buffers.injected)
        self.records.removeAll(keepingCapacity: true)
        self.injected.removeAll(keepingCapacity: true)
        self.lookahead.removeAll(keepingCapacity: true)
        self.headScratch.removeAll(keepingCapacity: true)
        self.pendingBefore = rules.inject.indices.filter {
            if case .before = rules.inject[$0].position { return true }
            return false
        }
    }

    public mutating func handle(_ event: consuming MultipartEvent) {
        guard refusal == nil else { return }
        switch consume event {
        case .partBegin(let head):
            begin(head)
        case .body(let bytes):
            guard !dropping else { return }
            // The held part is tested, then moved out with `take()`: never copied (an `if let`
            // binding copied its head and values, every buffer retained, on every read).
            if held != nil, let windowBytes = rules.sniff?.bytes {
                if lookahead.isEmpty, borrowed == nil, borrowsInput {
                    // The window's first bytes are in this read: sniffed where they lie and,
                    // when the part ends within the read, forwarded without a copy.
                    guard bytes.count >= windowBytes else {
                        borrowed = bytes
                        return
                    }
                    emitSniffed(held.take()!, window: UnsafeRawBufferPointer(rebasing: bytes[..<windowBytes]))
                    guard refusal == nil else { return }
                    forward(bytes)
                    return
                }
                keepBorrowed()
                let take = min(bytes.count, windowBytes - lookahead.count)
                lookahead.append(contentsOf: bytes[..<take])
                guard lookahead.count >= windowBytes else { return }
                release(held.take()!)
                guard refusal == nil else { return }
                forward(UnsafeRawBufferPointer(rebasing: bytes[take...]))
                return
            }
            forward(bytes)
        case .partEnd:
            if let part = held.take() {
                if let window = borrowed {
                    borrowed = nil
                    emitSniffed(part, window: window)
                    guard refusal == nil else { return }
                    forward(window)
                } else {
                    release(part)
                }
                guard refusal == nil else { return }
            }
            if stripper != nil { endStrip() }
            if inspecting { holdForVerdict() }
            output.toDeferred = false
            if !dropping, let digests { endDigests(digests) }
            digests = nil
            dropping = false
        case .end:
            emitFirstIfNeeded()
            for index in pendingBefore {
                emitInjection(index, values: baseValues(field: "", index: records.count))
            }
            pendingBefore.removeAll()
            for index in rules.inject.indices where rules.inject[index].position == .last {
                emitInjection(index, values: baseValues(field: "", index: records.count))
            }
            output.toDeferred = rules.fieldsFirst && deferred != nil
            do throws(MultipartEncodingError) {
                if let declaredLength {
                    try finishDeclared(declaredLength)
                } else {
                    try encoder.finish(into: &output)
                }
            } catch {
                refusal = Refusal(.encoding, description: "\(error)")
            }
        }
    }

    private mutating func forward(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        records[records.count - 1].bytes += Int64(bytes.count)
        if stripper != nil { return strip(bytes) }
        emit(bytes)
    }

    private mutating func begin(_ head: consuming PartHead) {
        let original = head.nameString
        let name = rules.renameFields.isEmpty ? original : rules.renameFields[original] ?? original
        // A client field named like one FormGate adds would reach the upstream beside it (PHP
        // keeps the last value): it is dropped as if `drop_fields` named it.
        if (!rules.dropFields.isEmpty && rules.dropFields.contains(original)) || rules.shadowsAddedField(name)
        {
            dropping = true
            let declared = Self.declaredType(head)
            appendRecord(
                PartRecord(
                    name: original, filename: head.filenameString, originalFilename: head.filenameString,
                    declaredType: declared, contentType: declared, dropped: true))
            return
        }
        if fileForwarded, rules.fileLast {
            refusal = Refusal(
                .partAfterFile,
                description:
                    "part \(name) follows the file: the object store reads only the fields before it (send them first, or use request_body: buffer with order: fields_first)"
            )
            return
        }
        if head.isFile { fileForwarded = true }
        emitFirstIfNeeded()
        var values = baseValues(field: name, index: records.count)
        var safe = ""
        if let raw = head.filename {
            do throws(FilenameSanitizer.Refusal) {
                safe = try FilenameSanitizer.sanitize(raw)
            } catch {
                refusal = Refusal(
                    .unsafeFilename, description: "unsafe filename in part \(original): \(error)")
                return
            }
            values.original = safe
            let utf8 = safe.utf8
            if let dot = utf8.lastIndex(of: UInt8(ascii: ".")), dot != utf8.startIndex {
                values.ext = Self.lowercasedASCII(safe[dot...])
                values.basename = String(safe[..<dot])
            } else {
                values.basename = safe
            }
        }
        let isFile = head.isFile
        let part = HeldPart(
            head: consume head, name: name, values: values, safeName: safe, renamed: name != original)
        if isFile, rules.sniff != nil {
            held = consume part
            lookahead.removeAll(keepingCapacity: true)
            return
        }
        emitHead(consume part, sniffed: nil)
    }

    /// The sniff window is full (or the part ended): decide, emit the head, then the bytes.
    private mutating func release(_ part: consuming HeldPart) {
        let sniffed = sniffer?.sniff(lookahead)
        emitHead(part, sniffed: sniffed)
        guard refusal == nil else { return }
        lookahead.withUnsafeBytes { forward($0) }
        lookahead.removeAll(keepingCapacity: true)
    }

    /// Sniffs `window` (the part's first bytes, where they were read) and emits the head.
    private mutating func emitSniffed(_ part: consuming HeldPart, window: UnsafeRawBufferPointer) {
        emitHead(part, sniffed: sniffer?.sniff(window))
    }

    /// The read the borrowed window lies in ends (`inputEnds`), or more bytes follow it: the
    /// window is copied into `lookahead`.
    private mutating func keepBorrowed() {
        guard let window = borrowed else { return }
        borrowed = nil
        lookahead.append(contentsOf: window)
    }

    /// The bytes of the current feed are about to go: a sniff window that still refers to
    /// them is copied. Required after every feed when `borrowsInput` is set.
    public mutating func inputEnds() {
        keepBorrowed()
    }

    /// Applies the type rules and the filename, emits due injections and the part's head.
    ///
    /// The head carries `Content-Type` (declared, sniffed, or repaired) and the headers the
    /// route keeps, nothing else (RFC 7578 §4.8).
    private mutating func emitHead(_ part: consuming HeldPart, sniffed: String?) {
        // The head's fields are built in a buffer kept from part to part.
        var partHeaders = headScratch
        headScratch = HeaderFields()
        partHeaders.removeAll(keepingCapacity: true)
        emitHead(&part, sniffed: sniffed, headers: &partHeaders)
        headScratch = partHeaders
    }

    /// `emitHead(_:sniffed:)` with the head's fields built in `partHeaders`; the part's values
    /// are completed in place (the extension a sniffed type gives, the final file name).
    private mutating func emitHead(
        _ part: inout HeldPart, sniffed: String?, headers partHeaders: inout HeaderFields
    ) {
        let declared = Self.declaredType(part.head)
        // The part's `Content-Type` as written, kept beside `partHeaders` for the record and
        // the injections (read back from the fields, it was a second copy of the string).
        var contentType: String?
        if let declared, !part.head.hasInvalidContentType {
            partHeaders.append(name: "Content-Type", value: declared)
            contentType = declared
        }
        if part.head.isFile {
            // Parsed only for the rules that read it.
            let declaredEssence =
                rules.sniff?.policy == .rejectMismatch || !rules.allowTypes.isEmpty
                ? declared.flatMap { try? MediaType.parse($0).essence } : nil
            if let sniffed, let policy = rules.sniff?.policy {
                switch policy {
                case .override:
                    partHeaders.set(name: "Content-Type", value: sniffed)
                    contentType = sniffed
                case .keep:
                    break
                case .rejectMismatch:
                    if let mismatch = rules.typeMismatch(
                        part: part.name, declared: declaredEssence, sniffed: sniffed)
                    {
                        refusal = mismatch
                        return
                    }
                }
                if let ext = Sniffer.fileExtension(for: sniffed) { part.values.ext = ext }
            }
            if part.head.hasInvalidContentType, let sniffed {
                partHeaders.set(name: "Content-Type", value: sniffed)
                contentType = sniffed
            }
            if let notAllowed = rules.typeNotAllowed(
                part: part.name, declared: declaredEssence, sniffed: sniffed)
            {
                refusal = notAllowed
                return
            }
        }
        if part.head.hasInvalidContentType, contentType == nil {
            partHeaders.append(name: "Content-Type", value: "application/octet-stream")
            contentType = "application/octet-stream"
        }
        part.head.headers.forEachField { name, value in
            if rules.policy.keeps(name) && !Self.isWritten(name) {
                partHeaders.append(name: name, value: value)
            }
        }
        var finalFilename: String?
        if part.head.filename != nil {
            if let template = rules.filename, !part.safeName.isEmpty {
                let rendered = template.render(part.values, random: &random)
                do throws(FilenameSanitizer.Refusal) {
                    finalFilename = try FilenameSanitizer.sanitize(rendered)
                } catch {
                    refusal = Refusal(
                        .unsafeFilename, description: "the filename template produced an unsafe name")
                    return
                }
            } else {
                finalFilename = part.safeName
            }
            part.values.filename = finalFilename ?? ""
        }
        var pending = 0
        while pending < pendingBefore.count {
            let injection = pendingBefore[pending]
            guard rules.inject[injection].position == .before(part.name) else {
                pending += 1
                continue
            }
            pendingBefore.remove(at: pending)
            emitInjection(injection, values: part.values, contentType: contentType)
        }
        output.toDeferred = rules.fieldsFirst && part.head.isFile && deferred != nil
        do throws(MultipartEncodingError) {
            try encoder.beginPart(
                name: part.name, filename: finalFilename, headers: partHeaders, into: &output)
        } catch {
            refusal = Refusal(.encoding, description: "\(error)")
            return
        }
        if part.head.isFile, fileContent == nil {
            fileContent = (part.head.contentOffset, output.written)
        }
        appendRecord(
            PartRecord(
                name: part.name, filename: finalFilename, originalFilename: part.head.filenameString,
                declaredType: declared, sniffedType: sniffed, contentType: contentType,
                renamed: part.renamed))
        if part.head.isFile, !rules.digests.isEmpty {
            digests = spareDigests ?? PartDigests(rules.digests, queue: hashing)
            spareDigests = nil
        } else {
            digests = nil
        }
        if part.head.isFile { beginStrip(sniffed: sniffed) }
        if part.head.isFile, let inspection = rules.inspection,
            inspection.inspects(records[records.count - 1])
        {
            inspecting = true
            inspected = inspectors?.open(inspection, part: records[records.count - 1])
        }
    }

    /// Adds a part's record; the first one makes room for four (one allocation for most
    /// requests, not one per doubling).
    mutating func appendRecord(_ record: consuming PartRecord) {
        if records.capacity == 0 { records.reserveCapacity(4) }
        records.append(record)
    }
}
