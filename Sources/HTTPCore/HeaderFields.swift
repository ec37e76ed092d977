/// An ordered list of header fields: names compare without regard to ASCII case, values are
/// raw bytes (obs-text and UTF-8 pass through untouched).
///
/// Order and duplicates are kept as received; lookups return the first match.
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

    /// The fields in the order received.
    public private(set) var fields: [Field]

    /// Creates an empty list.
    public init() {
        fields = []
    }

    /// Creates a list from name/value string pairs.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field($0.0, $0.1) }
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Makes room for `capacity` fields.
    public mutating func reserveCapacity(_ capacity: Int) {
        fields.reserveCapacity(capacity)
    }

    /// Appends a field, keeping any earlier field of the same name.
    public mutating func append(_ field: Field) {
        fields.append(field)
    }

    /// Appends a field from strings.
    public mutating func append(name: String, value: String) {
        fields.append(Field(name, value))
    }

    /// Removes every field called `name`.
    public mutating func removeAll(named name: String) {
        removeAll { Self.name($0.name, is: name) }
    }

    /// Whether field name bytes spell `query`, ignoring ASCII case. Lookups run several times
    /// per request: this compares lengths, then raw bytes, instead of iterating a `String`.
    static func name(_ name: [UInt8], is query: String) -> Bool {
        guard name.count == query.utf8.count else { return false }
        let matched = query.utf8.withContiguousStorageIfAvailable { query in
            name.withUnsafeBufferPointer { name in
                for index in 0..<name.count where name[index] != query[index] {
                    guard name[index].asciiLowercased == query[index].asciiLowercased else { return false }
                }
                return true
            }
        }
        return matched ?? asciiCaseInsensitiveEquals(name, query.utf8)
    }

    /// Removes the fields `shouldRemove` picks (without copying shared storage when it picks
    /// none).
    public mutating func removeAll(where shouldRemove: (Field) -> Bool) {
        guard fields.contains(where: shouldRemove) else { return }
        fields.removeAll(where: shouldRemove)
    }

    /// Replaces every field called `name` with one field holding `value`, at the position of
    /// the first one (or at the end).
    public mutating func set(name: String, value: String) {
        set(Field(name, value))
    }

    /// `set(name:value:)` for a field given as bytes.
    public mutating func set(_ field: Field) {
        if let index = fields.firstIndex(where: { asciiCaseInsensitiveEquals($0.name, field.name) }) {
            fields[index] = field
            var next = index + 1
            while next < fields.count {
                if asciiCaseInsensitiveEquals(fields[next].name, field.name) {
                    fields.remove(at: next)
                } else {
                    next += 1
                }
            }
        } else {
            fields.append(field)
        }
    }

    /// The value bytes of the first field called `name`.
    public func first(_ name: String) -> [UInt8]? {
        fields.first { Self.name($0.name, is: name) }?.value
    }

    /// The value of the first field called `name`, decoded as UTF-8.
    public subscript(name: String) -> String? {
        first(name).map { String(decoding: $0, as: UTF8.self) }
    }

    /// How many fields are called `name`.
    public func count(of name: String) -> Int {
        fields.reduce(0) { $0 + (Self.name($1.name, is: name) ? 1 : 0) }
    }

    /// True when a field called `name` is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { Self.name($0.name, is: name) }
    }

    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }
}
