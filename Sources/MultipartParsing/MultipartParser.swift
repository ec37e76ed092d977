import HTTPCore

/// A push parser for `multipart/form-data` bodies (RFC 7578, RFC 2046 §5.1).
///
/// Feed it the body in buffers of any size with `feed(_:into:)`, then call `finish(into:)`.
/// It reports `partBegin`, `body`, `partEnd` and `end` events to a handler. Part content is
/// handed out as slices of the caller's buffer (no copy). Between calls the parser keeps at
/// most one CR plus a proper prefix of `\n--boundary` — as a count, never the bytes, since
/// they are known — so a read re-examines at most a delimiter's length of earlier input and
/// the search never rescans. Memory is bounded by the part header limit, whatever the body
/// size.
///
/// Every input split yields the same events (modulo how `body` bytes are chunked).
/// After an error the parser stays failed and rethrows it.
///
/// Line endings: the first delimiter line fixes them for the body. In a CRLF body a bare-LF
/// `--boundary` line is content (RFC 2046's delimiter is CRLF `--boundary`, flag
/// `bare_lf_delimiter`); in an LF body a CR before a delimiter is refused (`mixedLineEndings`).
///
/// `end` is reported by `finish(into:)`, once the epilogue and the final line break were
/// judged: a handler that writes the closing delimiter of a re-encoded body then never sends
/// it for a body that a late flag (`data_after`, `missing_final_line_break`) refuses.
public struct MultipartParser {
    enum State: Equatable {
        /// Matching `--boundary` at the very first byte.
        case start(matched: Int)
        /// Discarding a preamble, matching `\n--boundary`.
        case preamble(matched: Int)
        /// The delimiter was matched; the next byte tells delimiter from look-alike data.
        case afterDelimiter(cr: Bool)
        /// The delimiter and one `-` were matched.
        case afterDelimiterDash(cr: Bool)
        /// The delimiter and a CR were matched.
        case afterDelimiterCR(cr: Bool)
        /// A delimiter was accepted: optional padding, then the line break.
        case delimiterLine
        /// A delimiter line's CR was read; LF must follow.
        case delimiterLineCR
        /// Reading a part's header section.
        case headers
        /// Streaming part content, searching for the delimiter.
        case body
        /// After `--boundary--`: optional padding, then a line break.
        case closeLine
        /// After `--boundary--` and a CR.
        case closeLineCR
        /// After the closing delimiter line; everything is ignored.
        case epilogue
    }

    enum LineEnding {
        case crlf, lf
    }

    /// The limits in force.
    public let limits: MultipartLimits
    /// The flags refused and the part headers kept.
    public let policy: MultipartPolicy
    /// Irregularities repaired so far.
    public internal(set) var anomalies: MultipartAnomalies = []
    /// Parts begun so far.
    public internal(set) var partCount = 0
    /// The boundary this parser looks for (without the leading dashes).
    public var boundary: [UInt8] { Array(heldBytes.dropFirst(4)) }

    /// The bytes of the closing delimiter this body ends with, from the line break before it
    /// to its final `--`: `CRLF--boundary--`, or `LF--boundary--` in a bare-LF body (the
    /// line ending is fixed by the first delimiter; a body that mixes them is refused).
    public var closeDelimiterLength: Int { delimiterCount + 2 + (lineEnding == .lf ? 0 : 1) }

    /// Whether the closing delimiter has been read.
    public var isComplete: Bool {
        state == .closeLine || state == .closeLineCR || state == .epilogue
    }

    /// `\n--boundary`: what the body search looks for.
    var delimiter: ArraySlice<UInt8> { heldBytes[1...] }
    /// `\r\n--boundary`: the bytes held back (as a count) while matching.
    private(set) var heldBytes: [UInt8]
    var delimiterCount: Int { heldBytes.count - 1 }

    var state: State = .start(matched: 0)
    var insidePart = false
    var lineEnding: LineEnding?
    var consumed: Int64 = 0
    var failure: MultipartError?

    // Delimiter prefix carried across reads while in `.body`.
    var carryCR = false
    var carryMatched = 0

    // Current part.
    var headerLine: [UInt8] = []
    var headerLineCR = false
    var headerBytes = 0
    /// The current part's fields and the buffers they are read into: what its `PartHead`
    /// shows. Refilled for the next part when no head refers to it any more, else replaced
    /// (`beginHeaders`).
    var head: PartHeadFields
    /// The current part's header lines, in `head`.
    var headerFields: HeaderFields {
        get { head.headers }
        _modify { yield &head.headers }
    }
    /// Where the current part's own headers are in `headerFields`, noted line by line.
    var partHeaders = PartHeaderIndex()
    /// The buffers a part head's name, file name and declared type are read into, in `head`.
    var valueBuffers: PartValueBuffers {
        get { head.values }
        _modify { yield &head.values }
    }
    var partBytes: Int64 = 0
    var partByteLimit: Int64 = 0
    var partLimit = MultipartError.Limit.fieldBytes
    var fieldCount = 0
    /// File parts whose head has been read (the one over a limit included).
    public internal(set) var fileCount = 0

    /// Creates a parser for `boundary` (the `boundary` parameter, without leading dashes).
    ///
    /// - Parameters:
    ///   - policy: the flags that refuse the body, and the part headers that are kept.
    ///   - requestAnomalies: flags found in the request head (the request's `Content-Type`),
    ///     judged by `policy` like the body's own.
    /// - Throws: `.invalidBoundary` when it is empty, longer than 70 characters or uses
    ///   characters outside RFC 2046's `bchars`; `.rejectedAnomaly` for a request flag the
    ///   policy refuses.
    public init(
        boundary: some Collection<UInt8>, limits: MultipartLimits = MultipartLimits(),
        policy: MultipartPolicy = MultipartPolicy(), requestAnomalies: MultipartAnomalies = []
    ) throws(MultipartError) {
        try self.init(
            boundary: boundary, limits: limits, policy: policy, requestAnomalies: requestAnomalies,
            buffers: Buffers())
    }

    /// The buffers a parser grows (the delimiter, the header line, the part's fields), taken
    /// from one body's parser for the next body's on the same connection.
    public struct Buffers: Sendable {
        var held: [UInt8] = []
        var headerLine: [UInt8] = []
        /// The last parser's part head buffers, when no head refers to them.
        var head: PartHeadFields?

        /// No buffers: a parser given them allocates its own.
        public init() {}

        /// The most bytes one kept buffer may hold: what a connection keeps between bodies.
        public static let keptLimit = 16 * 1024
    }

    /// Takes this parser's buffers (it must not be used after). They are emptied, their
    /// capacity kept, by the parser they are given to. The part head buffers are kept only when
    /// no part head refers to them any more; a buffer that grew past `Buffers.keptLimit` (a
    /// part head near its limit) is not kept.
    public mutating func takeBuffers() -> Buffers {
        var buffers = Buffers()
        swap(&buffers.held, &heldBytes)
        if headerLine.capacity <= Buffers.keptLimit { swap(&buffers.headerLine, &headerLine) }
        if isKnownUniquelyReferenced(&head), head.headers.capacityBytes <= Buffers.keptLimit,
            head.values.capacity <= Buffers.keptLimit
        {
            head.releaseResults()
            // Moved, not shared: this parser keeps the spent placeholder, never written to
            // (a shared `head` is replaced before the parser writes, `beginHeaders`).
            buffers.head = head
            head = PartHeadFields.spent
        }
        return buffers
    }

    /// `init(boundary:limits:policy:requestAnomalies:)` in `buffers` (an earlier parser's,
    /// `takeBuffers()`): only their capacity is kept, none of that parser's state.
    public init(
        boundary: some Collection<UInt8>, limits: MultipartLimits = MultipartLimits(),
        policy: MultipartPolicy = MultipartPolicy(), requestAnomalies: MultipartAnomalies = [],
        buffers: consuming Buffers
    ) throws(MultipartError) {
        do {
            try MediaType.validateBoundary(boundary)
        } catch {
            throw MultipartError(.invalidBoundary, at: 0)
        }
        self.limits = limits
        self.policy = policy
        var held: [UInt8] = []
        swap(&held, &buffers.held)
        held.removeAll(keepingCapacity: true)
        held.reserveCapacity(boundary.count + 4)
        held.append(contentsOf: [0x0D, 0x0A, 0x2D, 0x2D])
        held.append(contentsOf: boundary)
        self.heldBytes = held  // CR LF - - boundary; the delimiter is from the LF on
        swap(&self.headerLine, &buffers.headerLine)
        self.headerLine.removeAll(keepingCapacity: true)
        self.head = buffers.head ?? PartHeadFields()
        buffers.head = nil
        if !isKnownUniquelyReferenced(&self.head) { self.head = PartHeadFields() }
        self.headerFields.removeAll(keepingCapacity: true)
        self.headerLine.reserveCapacity(256)
        self.headerFields.reserveCapacity(4)
        self.headerFields.reserveByteCapacity(256)
        try flag(requestAnomalies, at: 0)
    }

    /// Creates a parser for a boundary given as a string.
    public init(
        boundary: String, limits: MultipartLimits = MultipartLimits(),
        policy: MultipartPolicy = MultipartPolicy()
    ) throws(MultipartError) {
        try self.init(boundary: Array(boundary.utf8), limits: limits, policy: policy)
    }

    /// Parses the next bytes of the body, reporting events to `handler`.
    ///
    /// - Throws: `MultipartError`; after that every call throws the same error.
    public mutating func feed(
        _ buffer: UnsafeRawBufferPointer, into handler: inout some MultipartEventHandler
    )
        throws(MultipartError)
    {
        if let failure { throw failure }
        do {
            var index = 0
            while index < buffer.count {
                index = try step(buffer, from: index, &handler)
            }
        } catch {
            failure = error
            throw error
        }
        consumed += Int64(buffer.count)
    }

    /// Parses bytes from an array.
    public mutating func feed(_ bytes: [UInt8], into handler: inout some MultipartEventHandler)
        throws(MultipartError)
    {
        var thrown: MultipartError?
        bytes.withUnsafeBytes { buffer in
            do throws(MultipartError) {
                try feed(buffer, into: &handler)
            } catch {
                thrown = error
            }
        }
        if let thrown { throw thrown }
    }

    /// Declares the end of the input and reports `end`.
    ///
    /// - Throws: `.unexpectedEnd` when the closing delimiter has not been read;
    ///   `.rejectedAnomaly` when the policy refuses `missing_final_line_break`.
    public mutating func finish(into handler: inout some MultipartEventHandler) throws(MultipartError) {
        if let failure { throw failure }
        do throws(MultipartError) {
            switch state {
            case .closeLine, .closeLineCR:
                try flag(.missingFinalLineBreak, at: consumed)
            case .epilogue:
                break
            default:
                throw MultipartError(.unexpectedEnd, at: consumed)
            }
        } catch {
            failure = error
            throw error
        }
        handler.handle(.end)
    }

    /// Records `found` (one flag or none); throws when the policy refuses it.
    mutating func flag(_ found: MultipartAnomalies, at offset: Int64) throws(MultipartError) {
        guard !found.isEmpty else { return }
        anomalies.formUnion(found)
        let refused = found.intersection(policy.rejected)
        if !refused.isEmpty { throw MultipartError(.rejectedAnomaly(refused), at: offset) }
    }

    /// Runs the state machine from `index`; returns the index of the first unprocessed byte.
    mutating func step(
        _ buffer: UnsafeRawBufferPointer, from index: Int, _ handler: inout some MultipartEventHandler
    ) throws(MultipartError) -> Int {
        switch state {
        case .start(let matched):
            return try scanStart(buffer, from: index, matched: matched)
        case .preamble(let matched):
            return try scanPreamble(buffer, from: index, matched: matched)
        case .afterDelimiter(let cr):
            return try afterDelimiter(buffer, from: index, cr: cr, &handler)
        case .afterDelimiterDash(let cr):
            return try afterDelimiterDash(buffer, from: index, cr: cr, &handler)
        case .afterDelimiterCR(let cr):
            return try afterDelimiterCR(buffer, from: index, cr: cr, &handler)
        case .delimiterLine, .delimiterLineCR:
            return try delimiterLine(buffer, from: index)
        case .headers:
            return try scanHeaders(buffer, from: index, &handler)
        case .body:
            return try scanBody(buffer, from: index, &handler)
        case .closeLine, .closeLineCR:
            return try closeLine(buffer, from: index)
        case .epilogue:
            try flag(.dataAfter, at: offset(index))
            return buffer.count
        }
    }

    func offset(_ index: Int) -> Int64 {
        consumed + Int64(index)
    }
}

/// A part head's value buffers (see `MultipartParser.valueBuffers`).
struct PartValueBuffers: Sendable {
    var disposition = ContentDisposition.ValueBuffers()
    var contentType: [UInt8] = []

    /// The most bytes one of them holds room for.
    var capacity: Int { max(disposition.capacity, contentType.capacity) }
}

/// Where a part's `Content-Disposition`, `Content-Type` and `Content-Transfer-Encoding` are
/// among its header fields, and what its other headers flag, noted as the lines are taken.
struct PartHeaderIndex {
    /// The fields called one name: how many, and the first one's position.
    struct Seen {
        var count = 0
        var first: Int?

        mutating func note(_ position: Int) {
            count += 1
            if first == nil { first = position }
        }
    }

    var disposition = Seen()
    var contentType = Seen()
    var transferEncoding = Seen()
    /// `contentTransferEncoding`, `extraPartHeader`.
    var anomalies: MultipartAnomalies = []
    /// The first kept header that repeats an earlier one's name.
    var repeatedKept: String?
}
