/// The spans waiting for export: a ring of fixed capacity (in spans), so a push is O(1) and
/// fails (the spans are dropped) when the ring is full. An entry is a span, or a source that
/// makes its spans on the export thread (`SpanSource`), taken out whole.
struct SpanQueue {
    /// One queued entry.
    enum Entry: Sendable {
        case span(Span)
        case deferred(any SpanSource)

        var spanCount: Int {
            switch self {
            case .span: 1
            case .deferred(let source): max(1, source.spanCount)
            }
        }

        /// Appends the entry's spans to `batch` (builds a deferred source's: export thread).
        func append(to batch: inout [Span]) {
            switch self {
            case .span(let span): batch.append(span)
            case .deferred(let source): batch.append(contentsOf: source.spans())
            }
        }
    }

    private var slots: [Entry?]
    /// The slot of the oldest entry.
    private var head = 0
    /// Entries queued.
    private var entries = 0
    /// Spans queued (what the capacity bounds).
    private(set) var count = 0
    /// The most spans queued.
    let capacity: Int

    /// An empty queue of `capacity` spans (at least 1).
    init(capacity: Int) {
        self.capacity = max(1, capacity)
        slots = Array(repeating: nil, count: self.capacity)
    }

    var isEmpty: Bool { entries == 0 }

    /// Queues `span` behind the others; false (and nothing queued) when the queue is full.
    mutating func push(_ span: consuming Span) -> Bool {
        push(entry: .span(span))
    }

    /// Queues `entry` behind the others; false (and nothing queued) when its spans do not fit.
    mutating func push(entry: consuming Entry) -> Bool {
        let spans = entry.spanCount
        guard count + spans <= capacity, entries < slots.count else { return false }
        var slot = head + entries
        if slot >= slots.count { slot -= slots.count }
        slots[slot] = entry
        entries += 1
        count += spans
        return true
    }

    /// Moves the oldest entries to the end of `taken` until they hold at least `limit` spans
    /// or the queue is empty (the last entry may take it a few past `limit`).
    mutating func pop(upTo limit: Int, into taken: inout [Entry]) {
        var spans = 0
        while entries > 0, spans < limit {
            guard let entry = slots[head].take() else { break }
            spans += entry.spanCount
            taken.append(entry)
            head += 1
            if head == slots.count { head = 0 }
            entries -= 1
        }
        count -= spans
    }

    /// `pop(upTo:into:)` with the spans made at once (tests).
    mutating func pop(upTo limit: Int, into batch: inout [Span]) {
        var taken: [Entry] = []
        pop(upTo: limit, into: &taken)
        for entry in taken { entry.append(to: &batch) }
    }

    /// Empties the queue; returns how many spans it held.
    mutating func removeAll() -> Int {
        let removed = count
        for index in slots.indices { slots[index] = nil }
        head = 0
        entries = 0
        count = 0
        return removed
    }
}
