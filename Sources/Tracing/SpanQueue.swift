/// The spans waiting for export: a ring of fixed capacity, so a push is O(1), never
/// allocates, and fails (the span is dropped) when the ring is full.
struct SpanQueue {
    private var slots: [Span?]
    /// The slot of the oldest span.
    private var head = 0
    /// Spans queued.
    private(set) var count = 0

    /// An empty queue of `capacity` spans (at least 1).
    init(capacity: Int) {
        slots = Array(repeating: nil, count: max(1, capacity))
    }

    var capacity: Int { slots.count }
    var isEmpty: Bool { count == 0 }

    /// Queues `span` behind the others; false (and nothing queued) when the queue is full.
    mutating func push(_ span: consuming Span) -> Bool {
        guard count < slots.count else { return false }
        var slot = head + count
        if slot >= slots.count { slot -= slots.count }
        slots[slot] = span
        count += 1
        return true
    }

    /// Moves the oldest spans, at most `limit`, to the end of `batch`.
    mutating func pop(upTo limit: Int, into batch: inout [Span]) {
        let taken = min(limit, count)
        for _ in 0..<taken {
            if let span = slots[head].take() { batch.append(span) }
            head += 1
            if head == slots.count { head = 0 }
        }
        count -= taken
    }

    /// Empties the queue; returns how many spans it held.
    mutating func removeAll() -> Int {
        let removed = count
        for index in slots.indices { slots[index] = nil }
        head = 0
        count = 0
        return removed
    }
}
