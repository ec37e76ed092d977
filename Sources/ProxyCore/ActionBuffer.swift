public import HTTPCore

/// The actions a state machine call returns, in order, and the bytes the `send` actions refer
/// to. The shell owns one per connection and clears it after executing it, so its storage
/// keeps its capacity: events allocate nothing here once it has grown.
///
/// As a `ByteSink` it appends to the byte store; `sendClient(_:)` and `sendUpstream(_:)`
/// record what a writer appended as one action.
public struct ActionBuffer: ByteSink, Sendable {
    /// The actions not yet executed.
    public private(set) var actions: [ProxyAction] = []
    /// The byte store the `send` actions point into.
    public private(set) var bytes: [UInt8] = []
    /// Index of the next action `next()` returns.
    private var cursor = 0
    /// The records of the `finish` actions, in order; those before `recordCursor` were taken.
    private var records: [AccessRecord] = []
    private var recordCursor = 0
    /// The buffers of the last heads read and built here, kept for the next ones
    /// (`takeSpare(_:)`): the buffer lives as long as its connection, so each request after the
    /// first reads its head, builds the upstream's and reads the response's without an
    /// allocation for their bytes or fields.
    private var spareRequest = HeaderFields()
    private var spareUpstreamRequest = HeaderFields()
    private var spareResponse = HeaderFields()

    /// Which head a kept list serves.
    public enum HeadSlot: Sendable {
        /// The client's request head (HTTP/1.1).
        case request
        /// The request head sent upstream.
        case upstreamRequest
        /// The upstream's response head, then the client's made from it (HTTP/1.1).
        case response
    }

    /// Creates an empty buffer with room for 16 actions and 1 KiB of bytes.
    public init() {
        self.init(actionCapacity: 16, byteCapacity: 1024)
    }

    /// Creates an empty buffer with room for `actionCapacity` actions and `byteCapacity`
    /// bytes (0 and 0: one that allocates nothing until it is used).
    public init(actionCapacity: Int, byteCapacity: Int) {
        actions.reserveCapacity(actionCapacity)
        bytes.reserveCapacity(byteCapacity)
    }

    /// How many actions were appended since the buffer was last cleared: a mark for
    /// `takeTimerActions(from:_:)`, and a way to see whether a call appended any.
    public var appendedCount: Int { actions.count }

    /// Removes the timer actions appended at or after `mark` (an `appendedCount`, not yet
    /// taken) and hands each to `body`, keeping the order of the others: an HTTP/2
    /// connection keeps its streams' deadlines itself.
    public mutating func takeTimerActions(from mark: Int, _ body: (ProxyAction) -> Void) {
        var kept = mark
        for index in mark..<actions.count {
            let action = actions[index]
            switch action {
            case .startTimer, .cancelTimer:
                body(action)
            default:
                if kept != index { actions[kept] = action }
                kept += 1
            }
        }
        if kept < actions.count { actions.removeSubrange(kept...) }
    }

    /// Whether actions not yet taken move request body bytes of HTTP/2 stream `id`: those
    /// after its `stream(id)`, or before any `stream` action (the stream being executed's).
    /// While they are pending, the stream's input still holds bytes its exchange has already
    /// claimed, and must not be read again.
    public func movesPending(forStream id: Int32) -> Bool {
        var stream: Int32?
        for index in cursor..<actions.count {
            switch actions[index] {
            case .stream(let other): stream = other
            case .moveRequestBody: if stream == nil || stream == id { return true }
            default: break
            }
        }
        return false
    }

    /// Takes the head buffers kept for `slot` (empty ones the first time), leaving none: what
    /// is built in them is given back with `keepSpare(_:_:)`.
    public mutating func takeSpare(_ slot: HeadSlot) -> HeaderFields {
        var spare = HeaderFields()
        switch slot {
        case .request: swap(&spare, &spareRequest)
        case .upstreamRequest: swap(&spare, &spareUpstreamRequest)
        case .response: swap(&spare, &spareResponse)
        }
        return spare
    }

    /// The most buffer bytes kept for one head: a head larger than usual (up to the header
    /// limit) is not kept, so an idle connection holds no more than this for it.
    public static let spareLimit = 16 * 1024

    /// Keeps `headers`' buffers for the next `takeSpare(slot)` (not when they hold more than
    /// `spareLimit` bytes). Their fields are dropped when they are reused, by which time no
    /// other copy should share them (one that still does only costs the allocation this saves).
    public mutating func keepSpare(_ slot: HeadSlot, _ headers: HeaderFields) {
        let headers = headers.capacityBytes <= Self.spareLimit ? headers : HeaderFields()
        switch slot {
        case .request: spareRequest = headers
        case .upstreamRequest: spareUpstreamRequest = headers
        case .response: spareResponse = headers
        }
    }

    /// Whether every action was taken.
    public var isEmpty: Bool { cursor == actions.count }

    /// Bytes that queued actions not yet taken will add to the client's output.
    public private(set) var pendingClientBytes = 0
    /// Bytes that queued actions not yet taken will add to the upstream's output or to the
    /// staging buffer (moves of staged or spooled bytes are not counted).
    public private(set) var pendingUpstreamBytes = 0

    /// Appends an action.
    public mutating func append(_ action: ProxyAction) {
        actions.append(action)
        adjustPending(action, by: 1)
    }

    private mutating func adjustPending(_ action: ProxyAction, by sign: Int) {
        switch action {
        case .sendClient(let range): pendingClientBytes += sign * range.count
        case .moveResponseBody(let count): pendingClientBytes += sign * count
        case .sendUpstream(let range): pendingUpstreamBytes += sign * range.count
        case .moveRequestBody(let count, _): pendingUpstreamBytes += sign * count
        default: break
        }
    }

    /// Appends to the byte store.
    public mutating func write(_ bytes: UnsafeRawBufferPointer) {
        self.bytes.append(contentsOf: bytes)
    }

    /// Appends a `finish` action for `record`.
    public mutating func finish(_ record: AccessRecord) {
        records.append(record)
        append(.finish)
    }

    /// The record of the `finish` action being executed (each is taken once, in order).
    public mutating func takeFinishedRecord() -> AccessRecord {
        recordCursor += 1
        return records[recordCursor - 1]
    }

    /// Records what `write` appends to the byte store as one `sendClient` action.
    ///
    /// - Returns: the number of bytes.
    @discardableResult
    public mutating func sendClient(_ write: (inout ActionBuffer) -> Void) -> Int {
        let start = bytes.count
        write(&self)
        if bytes.count > start { append(.sendClient(start..<bytes.count)) }
        return bytes.count - start
    }

    /// Records what `write` appends to the byte store as one `sendUpstream` action.
    public mutating func sendUpstream(_ write: (inout ActionBuffer) -> Void) {
        let start = bytes.count
        write(&self)
        if bytes.count > start { append(.sendUpstream(start..<bytes.count)) }
    }

    /// The next action to execute, or `nil` when all were taken (then the buffer is cleared,
    /// keeping its capacity). Actions appended while executing are returned in turn.
    public mutating func next() -> ProxyAction? {
        guard cursor < actions.count else {
            actions.removeAll(keepingCapacity: true)
            bytes.removeAll(keepingCapacity: true)
            cursor = 0
            if !records.isEmpty {
                records.removeAll(keepingCapacity: true)
                recordCursor = 0
            }
            return nil
        }
        cursor += 1
        adjustPending(actions[cursor - 1], by: -1)
        return actions[cursor - 1]
    }

    /// Calls `body` with the bytes of a `send` action's range.
    public func withBytes<Result>(_ range: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
        bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }
}
