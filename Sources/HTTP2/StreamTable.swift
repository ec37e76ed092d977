/// A table of objects keyed by HTTP/2 stream id: what a session or a connection keeps per open
/// stream, looked up several times for every frame.
///
/// Open addressing with linear probing over a power-of-two array, the id scrambled by one
/// multiplication: a lookup costs a few instructions, where a `Dictionary<Int32, _>` hashes
/// every key with SipHash (about thirty lookups per 4 KiB h2 upload, 2 % of the proxy's
/// instructions per request as `make h2-instructions` counts them). Removal shifts the entries that follow back (no tombstones), so a
/// long-lived connection that opens and closes millions of streams never degrades.
///
/// Ids are positive (stream 0 is the connection, never a key). Not thread-safe: one per
/// connection, on its loop.
public struct StreamTable<Value: AnyObject> {
    private var slotKeys: [Int32]
    private var slotValues: [Value?]
    private var mask: Int
    /// 64 minus log2 of the size: the product's top bits pick the slot.
    private var shift: UInt64
    /// The number of entries.
    public private(set) var count = 0

    /// Creates an empty table with room for `capacity` entries before it grows.
    public init(capacity: Int = 8) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        slotKeys = [Int32](repeating: 0, count: size)
        slotValues = [Value?](repeating: nil, count: size)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
    }

    /// Whether the table is empty.
    public var isEmpty: Bool { count == 0 }

    /// The value for `id`; setting `nil` removes it.
    public subscript(id: Int32) -> Value? {
        get {
            var slot = home(id)
            while true {
                let key = slotKeys[slot]
                if key == id { return slotValues[slot] }
                if key == 0 { return nil }
                slot = (slot + 1) & mask
            }
        }
        set {
            if let newValue {
                insert(newValue, for: id)
            } else {
                removeValue(forKey: id)
            }
        }
    }

    /// Removes `id`'s entry; returns its value.
    @discardableResult
    public mutating func removeValue(forKey id: Int32) -> Value? {
        var slot = home(id)
        while slotKeys[slot] != id {
            if slotKeys[slot] == 0 { return nil }
            slot = (slot + 1) & mask
        }
        let removed = slotValues[slot]
        // Backward shift: move later entries of the probe run into the hole when their home
        // slot allows it, so every lookup still finds them before an empty slot.
        var hole = slot
        var next = (slot + 1) & mask
        while slotKeys[next] != 0 {
            let start = home(slotKeys[next])
            // `next` may move into `hole` when its home is not in (hole, next], cyclically.
            let distanceToNext = (next - start) & mask
            let distanceToHole = (next - hole) & mask
            if distanceToNext >= distanceToHole {
                slotKeys[hole] = slotKeys[next]
                slotValues[hole] = slotValues[next]
                hole = next
            }
            next = (next + 1) & mask
        }
        slotKeys[hole] = 0
        slotValues[hole] = nil
        count -= 1
        return removed
    }

    /// Removes every entry, keeping the capacity.
    public mutating func removeAll() {
        guard count > 0 else { return }
        for slot in slotKeys.indices where slotKeys[slot] != 0 {
            slotKeys[slot] = 0
            slotValues[slot] = nil
        }
        count = 0
    }

    /// Whether any value satisfies `predicate`.
    public func contains(where predicate: (Value) throws -> Bool) rethrows -> Bool {
        guard count > 0 else { return false }
        for slot in slotKeys.indices where slotKeys[slot] != 0 {
            if let value = slotValues[slot], try predicate(value) { return true }
        }
        return false
    }

    /// Calls `body` with each value, in no particular order; `body` must not change the table.
    public func forEachValue(_ body: (Value) throws -> Void) rethrows {
        guard count > 0 else { return }
        for slot in slotKeys.indices where slotKeys[slot] != 0 {
            if let value = slotValues[slot] { try body(value) }
        }
    }

    /// The values, in no particular order (a copy: the table may change while the caller
    /// goes through it).
    public var values: [Value] {
        var result: [Value] = []
        result.reserveCapacity(count)
        forEachValue { result.append($0) }
        return result
    }

    private mutating func insert(_ value: Value, for id: Int32) {
        precondition(id > 0, "stream ids in a table are positive")
        var slot = home(id)
        while true {
            let key = slotKeys[slot]
            if key == id {
                slotValues[slot] = value
                return
            }
            if key == 0 { break }
            slot = (slot + 1) & mask
        }
        slotKeys[slot] = id
        slotValues[slot] = value
        count += 1
        // At most half full: probe runs stay short.
        if count * 2 > slotKeys.count { grow() }
    }

    private mutating func grow() {
        let oldKeys = slotKeys
        let oldValues = slotValues
        let size = slotKeys.count * 2
        slotKeys = [Int32](repeating: 0, count: size)
        slotValues = [Value?](repeating: nil, count: size)
        mask = size - 1
        shift = UInt64(64 - size.trailingZeroBitCount)
        for slot in oldKeys.indices where oldKeys[slot] != 0 {
            var target = home(oldKeys[slot])
            while slotKeys[target] != 0 { target = (target + 1) & mask }
            slotKeys[target] = oldKeys[slot]
            slotValues[target] = oldValues[slot]
        }
    }

    /// The slot an id probes first: the top bits of the id times 2^64 / φ (Fibonacci
    /// hashing), so ids a client spaces by the table's size still spread.
    private func home(_ id: Int32) -> Int {
        Int(truncatingIfNeeded: (UInt64(UInt32(bitPattern: id)) &* 0x9E37_79B9_7F4A_7C15) >> shift)
    }
}
