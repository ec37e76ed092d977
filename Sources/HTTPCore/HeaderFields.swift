/// An ordered list of header fields: names compare without regard to ASCII case, values are
/// raw bytes (obs-text and UTF-8 pass through untouched).
///
/// Order and duplicates are kept as received; lookups return the first match.
///
/// Storage is one byte buffer and one array of spans (where each field's name and value sit
/// in it), not two arrays per field: a parser hands over the bytes it parsed the head from
/// (`init(buffer:)`, `appendField(name:value:)`) and no field costs an allocation. Lookups,
/// `forEachField(_:)` and `removeFields(whereName:)` read the buffer in place; `Field` values are
/// made (copied) only where a caller asks for one: iterating, `fields`, `removeAll(where:)`.
/// Fields that are added or replaced append their bytes to the buffer.
public struct HeaderFields: Equatable, Sendable, Sequence {
    /// One header field as received.
    public struct Field: Equatable, Sendable {
        /// The name bytes as received (a token).
        public var name: [UInt8]
        /// The value bytes, without surrounding whitespace.
        public var value: [UInt8]

        /// Creates a field from bytes.
        public init(name: [UInt8], value: [UInt8]) {
            self.name = name
            self.value = value
        }

        /// Creates a field from strings (UTF-8).
        public init(_ name: String, _ value: String) {
            self.init(name: Array(name.utf8), value: Array(value.utf8))
        }

        /// The name as a string.
        public var nameString: String { String(decoding: name, as: UTF8.self) }
        /// The value decoded as UTF-8 (invalid sequences become U+FFFD).
        public var valueString: String { String(decoding: value, as: UTF8.self) }
    }

    /// Where one field's name and value sit in `storage`.
    @usableFromInline
    struct Span: Sendable {
        @usableFromInline var nameStart: UInt32
        @usableFromInline var nameCount: UInt32
        @usableFromInline var valueStart: UInt32
        @usableFromInline var valueCount: UInt32

        @inlinable
        init(nameStart: UInt32, nameCount: UInt32, valueStart: UInt32, valueCount: UInt32) {
            self.nameStart = nameStart
            self.nameCount = nameCount
            self.valueStart = valueStart
            self.valueCount = valueCount
        }

        @usableFromInline var name: Range<Int> { Int(nameStart)..<Int(nameStart + nameCount) }
        @usableFromInline var value: Range<Int> { Int(valueStart)..<Int(valueStart + valueCount) }
    }

    /// The bytes the fields are in: the parsed head, then the bytes of fields added later.
    @usableFromInline private(set) var storage: [UInt8]
    /// The fields in order.
    @usableFromInline private(set) var spans: [Span]

    /// Creates an empty list.
    public init() {
        storage = []
        spans = []
    }

    /// Creates an empty list over `buffer`, the bytes a head was parsed from; add its fields
    /// with `appendField(name:value:)`. The buffer is kept (shared, not copied).
    public init(buffer: [UInt8]) {
        storage = buffer
        spans = []
    }

    /// `init(buffer:)` in the fields array of `spare` (emptied, its capacity kept): a head
    /// parsed into a kept list's arrays costs no allocation once they have grown to its size.
    public init(buffer: [UInt8], reusing spare: consuming HeaderFields) {
        storage = buffer
        spans = []
        swap(&spans, &spare.spans)
        spans.removeAll(keepingCapacity: true)
    }

    /// The bytes the list's two buffers have room for (what keeping it for reuse holds).
    public var capacityBytes: Int {
        storage.capacity + spans.capacity * MemoryLayout<Span>.stride
    }

    /// Takes the byte buffer, emptied with its capacity kept, for the next head to be read
    /// into (then `init(buffer:reusing:)` with what is left of this list, its fields array).
    public mutating func takeBuffer() -> [UInt8] {
        var buffer: [UInt8] = []
        swap(&buffer, &storage)
        buffer.removeAll(keepingCapacity: true)
        return buffer
    }

    /// Creates a list from name/value string pairs.
    public init(_ pairs: [(String, String)]) {
        self.init()
        for (name, value) in pairs { append(name: name, value: value) }
    }

    /// The number of fields.
    public var count: Int { spans.count }

    /// The fields in order, as `Field` values (each a copy of its bytes).
    public var fields: [Field] { map { $0 } }

    /// Removes every field; with `keepingCapacity`, the buffers are kept for the next ones
    /// (when no copy of the list shares them).
    public mutating func removeAll(keepingCapacity: Bool) {
        storage.removeAll(keepingCapacity: keepingCapacity)
        spans.removeAll(keepingCapacity: keepingCapacity)
    }

    /// Makes this list a copy of `other` in its own buffers, with room for `extraFields` more
    /// fields and `extraBytes` more bytes of added names and values. A list kept between uses
    /// (and not shared) keeps its buffers' capacity: once they have grown to a head's size, the
    /// next head's copy costs no allocation.
    public mutating func replace(with other: HeaderFields, extraFields: Int = 0, extraBytes: Int = 0) {
        storage.removeAll(keepingCapacity: true)
        storage.reserveCapacity(other.storage.count + extraBytes)
        storage.append(contentsOf: other.storage)
        spans.removeAll(keepingCapacity: true)
        spans.reserveCapacity(other.spans.count + extraFields)
        spans.append(contentsOf: other.spans)
    }

    /// The value bytes of the field at `index`, as a slice of the buffer (no copy).
    public func valueBytes(at index: Int) -> ArraySlice<UInt8> {
        storage[spans[index].value]
    }

    /// Makes room for `capacity` fields.
    public mutating func reserveCapacity(_ capacity: Int) {
        spans.reserveCapacity(capacity)
    }

    /// Makes room for `capacity` more bytes of names and values added with
    /// `append(name:value:)`.
    public mutating func reserveByteCapacity(_ capacity: Int) {
        storage.reserveCapacity(storage.count + capacity)
    }

    /// Appends a field whose name and value are the given ranges of the buffer passed to
    /// `init(buffer:)` (no copy). The ranges must lie inside that buffer.
    public mutating func appendField(name: Range<Int>, value: Range<Int>) {
        precondition(name.lowerBound >= 0 && name.upperBound <= storage.count, "name outside the buffer")
        precondition(value.lowerBound >= 0 && value.upperBound <= storage.count, "value outside the buffer")
        spans.append(
            Span(
                nameStart: UInt32(name.lowerBound), nameCount: UInt32(name.count),
                valueStart: UInt32(value.lowerBound), valueCount: UInt32(value.count)))
    }

    /// Appends a field given as bytes (copied into the buffer), keeping any earlier field of
    /// the same name.
    @inlinable
    public mutating func append(name: some Collection<UInt8>, value: some Collection<UInt8>) {
        spans.append(store(name: name, value: value))
    }

    /// Inserts a field before the others (its bytes copied to the end of the buffer).
    @inlinable
    public mutating func prepend(name: some Collection<UInt8>, value: some Collection<UInt8>) {
        spans.insert(store(name: name, value: value), at: 0)
    }

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func append(_ field: Field) {
        append(name: field.name, value: field.value)
    }

    /// Appends a field from strings.
    public mutating func append(name: String, value: String) {
        append(name: name.utf8, value: value.utf8)
    }

    /// Copies a name and a value to the end of the buffer.
    @inlinable
    mutating func store(name: some Collection<UInt8>, value: some Collection<UInt8>) -> Span {
        let nameStart = storage.count
        storage.append(contentsOf: name)
        let valueStart = storage.count
        storage.append(contentsOf: value)
        return Span(
            nameStart: UInt32(nameStart), nameCount: UInt32(valueStart - nameStart),
            valueStart: UInt32(valueStart), valueCount: UInt32(storage.count - valueStart))
    }

    /// Removes every field called `name`.
    public mutating func removeAll(named name: String) {
        guard contains(name) else { return }
        var query = name
        query.withUTF8 { query in
            storage.withUnsafeBufferPointer { bytes in
                spans.removeAll { Self.equalsIgnoringCase(bytes, $0.name, query) }
            }
        }
    }

    /// Removes the fields `shouldRemove` picks (each offered as a `Field`, a copy: prefer
    /// `removeFields(whereName:)` on a hot path).
    public mutating func removeAll(where shouldRemove: (Field) -> Bool) {
        let kept = indices(where: { !shouldRemove(self.field(at: $0)) })
        if kept.count != spans.count { spans = kept.map { spans[$0] } }
    }

    /// Removes the fields whose name `shouldRemove` picks. The name bytes are borrowed: valid
    /// only during the call.
    public mutating func removeFields(whereName shouldRemove: (UnsafeBufferPointer<UInt8>) -> Bool) {
        let picked = storage.withUnsafeBufferPointer { bytes in
            spans.contains { shouldRemove(UnsafeBufferPointer(rebasing: bytes[$0.name])) }
        }
        guard picked else { return }
        // Out of `self` while the closure changes it: changed through the capture, the array
        // was copied (an allocation per request for the hop-by-hop fields).
        var kept = spans
        spans = []
        storage.withUnsafeBufferPointer { bytes in
            kept.removeAll { shouldRemove(UnsafeBufferPointer(rebasing: bytes[$0.name])) }
        }
        spans = kept
    }

    /// Replaces every field called `name` with one field holding `value`, at the position of
    /// the first one (or at the end).
    public mutating func set(name: String, value: String) {
        set(name: name.utf8, value: value.utf8)
    }

    /// `set(name:value:)` for a field given as bytes.
    public mutating func set(_ field: Field) {
        set(name: field.name, value: field.value)
    }

    /// `set(name:value:)` for a name and a value given as bytes (copied into the buffer).
    @inlinable
    public mutating func set(name: some Collection<UInt8>, value: some Collection<UInt8>) {
        let span = store(name: name, value: value)
        guard let first = spans.indices.first(where: { sameName(spans[$0], span) }) else {
            spans.append(span)
            return
        }
        spans[first] = span
        var next = first + 1
        while next < spans.count {
            if sameName(spans[next], span) {
                spans.remove(at: next)
            } else {
                next += 1
            }
        }
    }

    /// Whether two fields' names are equal, ignoring ASCII case.
    @usableFromInline
    func sameName(_ span: Span, _ other: Span) -> Bool {
        storage.withUnsafeBufferPointer { bytes in
            Self.equalsIgnoringCase(bytes, span.name, UnsafeBufferPointer(rebasing: bytes[other.name]))
        }
    }

    /// The value bytes of the first field called `name` (a copy).
    public func first(_ name: String) -> [UInt8]? {
        firstValue(name).map(Array.init)
    }

    /// The value bytes of the first field called `name`, as a slice of the buffer (no copy).
    public func firstValue(_ name: String) -> ArraySlice<UInt8>? {
        firstIndex(name).map { storage[spans[$0].value] }
    }

    /// The value of the first field called `name`, decoded as UTF-8.
    public subscript(name: String) -> String? {
        firstValue(name).map { String(decoding: $0, as: UTF8.self) }
    }

    /// How many fields are called `name`.
    public func count(of name: String) -> Int {
        var total = 0
        forEachSpan(named: name) { _ in
            total += 1
            return true
        }
        return total
    }

    /// True when a field called `name` is present.
    public func contains(_ name: String) -> Bool {
        firstIndex(name) != nil
    }

    /// Calls `body` with each field's name and value bytes in order, borrowed: valid only
    /// during the call. No copy and no `Field` is made.
    public func forEachField<E: Error>(
        _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>) throws(E) -> Void
    ) throws(E) {
        try storage.withUnsafeBufferPointer { (bytes) throws(E) in
            for span in spans {
                try body(
                    UnsafeBufferPointer(rebasing: bytes[span.name]),
                    UnsafeBufferPointer(rebasing: bytes[span.value]))
            }
        }
    }

    /// The bytes `Name: value\r\n` per field plus the final `\r\n` take.
    public var serializedCount: Int {
        spans.reduce(2) { $0 + Int($1.nameCount) + Int($1.valueCount) + 4 }
    }

    /// The field at `index` as a `Field` (a copy).
    func field(at index: Int) -> Field {
        Field(name: Array(storage[spans[index].name]), value: Array(storage[spans[index].value]))
    }

    /// The positions whose field `isIncluded` picks.
    private func indices(where isIncluded: (Int) -> Bool) -> [Int] {
        spans.indices.filter(isIncluded)
    }

    /// The position of the first field called `name`.
    private func firstIndex(_ name: String) -> Int? {
        var found: Int?
        forEachSpan(named: name) { index in
            found = index
            return false
        }
        return found
    }

    /// Calls `body` with the position of each field called `name` until it returns false.
    private func forEachSpan(named name: String, _ body: (Int) -> Bool) {
        var query = name
        query.withUTF8 { query in
            storage.withUnsafeBufferPointer { bytes in
                for index in spans.indices where Self.equalsIgnoringCase(bytes, spans[index].name, query) {
                    guard body(index) else { return }
                }
            }
        }
    }

    /// Whether `bytes[range]` spells `query`, ignoring ASCII case: lengths first, then raw
    /// bytes eight at a time, folding case only where they differ.
    static func equalsIgnoringCase(
        _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ query: UnsafeBufferPointer<UInt8>
    ) -> Bool {
        guard range.count == query.count else { return false }
        return asciiCaseInsensitiveEquals(UnsafeBufferPointer(rebasing: bytes[range]), query)
    }

    public static func == (lhs: HeaderFields, rhs: HeaderFields) -> Bool {
        guard lhs.spans.count == rhs.spans.count else { return false }
        for (left, right) in zip(lhs.spans, rhs.spans) {
            guard lhs.storage[left.name].elementsEqual(rhs.storage[right.name]),
                lhs.storage[left.value].elementsEqual(rhs.storage[right.value])
            else { return false }
        }
        return true
    }

    /// Iterates the fields as `Field` values (each a copy of its bytes).
    public struct Iterator: IteratorProtocol {
        let headers: HeaderFields
        var index = 0

        public mutating func next() -> Field? {
            guard index < headers.spans.count else { return nil }
            defer { index += 1 }
            return headers.field(at: index)
        }
    }

    public func makeIterator() -> Iterator {
        Iterator(headers: self)
    }
}
