/// The streams of an HTTP/2 connection keyed by stream id, holding values (a stream's
/// `Exchange` and its window credit) that are changed in place: `update` hands out the stored
/// value itself, never a copy of it.
///
/// Open addressing with linear probing over a power-of-two array, the id scrambled by one
/// multiplication (as `HTTP2.StreamTable`, which holds objects): a lookup costs a few
/// instructions where a `Dictionary` hashes with SipHash. Removal shifts the entries that
/// follow back, so a long-lived connection never degrades.
struct StreamSlots<Value> {
    private var keys: [Int32]
    private var values: [Value?]
    private var mask: Int
    /// 64 minus log2 of the size: the product's top bits pick the slot.
    private var shift: UInt64
    /// The number of entries.
    private(set) var count = 0

    /// Creates an empty table with room for `capacity` entries before it grows.
    init(capacity: Int = 8) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        keys = [Int32](repeating: 0, count: size)
        values = [Value?](repeating: nil, count: size)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
    }

    var isEmpty: Bool { count == 0 }

    private func slot(of id: Int32) -> Int? {
        var slot = home(id)
        while true {
            let key = keys[slot]
            if key == id { return slot }
            if key == 0 { return nil }
            slot = (slot + 1) & mask
        }
    }

    func contains(_ id: Int32) -> Bool { slot(of: id) != nil }

    /// Calls `body` with `id`'s value; `nil` when there is none. The value is copied out of the
    /// table (a large one at some cost): where the table may be mutated, `update` reads in place.
    func read<Result>(_ id: Int32, _ body: (borrowing Value) -> Result) -> Result? {
        guard let slot = slot(of: id) else { return nil }
        return body(values[slot]!)
    }

    /// Calls `body` with `id`'s value in place; `nil` when there is none.
    mutating func update<Result>(_ id: Int32, _ body: (inout Value) -> Result) -> Result? {
        guard let slot = slot(of: id) else { return nil }
        return body(&values[slot]!)
    }

    /// Calls `body` with each id and value in place, in no particular order; `body` must not
    /// add or remove entries.
    mutating func forEachStream(_ body: (Int32, inout Value) -> Void) {
        guard count > 0 else { return }
        for slot in keys.indices where keys[slot] != 0 {
            body(keys[slot], &values[slot]!)
        }
    }

    /// Whether any id satisfies `predicate`.
    func containsID(where predicate: (Int32) -> Bool) -> Bool {
        guard count > 0 else { return false }
        for key in keys where key != 0 {
            if predicate(key) { return true }
        }
        return false
    }

    /// Adds `value` for `id` (a positive id not in the table).
    mutating func insert(_ value: consuming Value, for id: Int32) {
        precondition(id > 0 && slot(of: id) == nil, "a new, positive stream id")
        var slot = home(id)
        while keys[slot] != 0 { slot = (slot + 1) & mask }
        keys[slot] = id
        values[slot] = value
        count += 1
        // At most half full: probe runs stay short.
        if count * 2 > keys.count { grow() }
    }

    /// Removes `id`'s entry; returns whether there was one.
    @discardableResult
    mutating func remove(_ id: Int32) -> Bool {
        guard let slot = slot(of: id) else { return false }
        // Backward shift: later entries of the probe run move into the hole when their home
        // slot allows it, so every lookup still finds them before an empty slot.
        var hole = slot
        var next = (slot + 1) & mask
        while keys[next] != 0 {
            let start = home(keys[next])
            if (next - start) & mask >= (next - hole) & mask {
                keys[hole] = keys[next]
                values.swapAt(hole, next)
                hole = next
            }
            next = (next + 1) & mask
        }
        keys[hole] = 0
        values[hole] = nil
        count -= 1
        return true
    }

    private mutating func grow() {
        let oldKeys = keys
        var oldValues: [Value?] = []
        swap(&oldValues, &values)
        let size = keys.count * 2
        keys = [Int32](repeating: 0, count: size)
        values = [Value?](repeating: nil, count: size)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
        for slot in oldKeys.indices where oldKeys[slot] != 0 {
            var target = home(oldKeys[slot])
            while keys[target] != 0 { target = (target + 1) & mask }
            keys[target] = oldKeys[slot]
            swap(&values[target], &oldValues[slot])
        }
    }

    /// The slot an id probes first (Fibonacci hashing).
    private func home(_ id: Int32) -> Int {
        Int(truncatingIfNeeded: (UInt64(UInt32(bitPattern: id)) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }
}
