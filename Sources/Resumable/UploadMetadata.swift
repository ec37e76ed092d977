import HTTPCore
/// The `Upload-Metadata` header of tus 1.0.0: comma-separated pairs of a key and a Base64 value,
/// separated by a space; a value may be absent. Keys are unique, non-empty, without spaces or
/// commas (FormGate also refuses control characters and non-ASCII in keys).
public struct UploadMetadata: Equatable, Sendable {
    /// One pair: the key, and the decoded value (`nil` when the value was absent).
    public struct Pair: Equatable, Sendable {
        public var key: String
        public var value: [UInt8]?

        public init(key: String, value: [UInt8]?) {
            self.key = key
            self.value = value
        }
    }

    /// Why a header was refused.
    public enum Failure: Error, Equatable, Sendable {
        case tooLarge
        case tooManyPairs
        case emptyKey
        case invalidKey
        case duplicateKey(String)
        case invalidBase64(String)
    }

    /// The pairs, in the order received.
    public var pairs: [Pair]

    public init(pairs: [Pair] = []) { self.pairs = pairs }

    /// The value of `key` (decoded), or nil when absent or without a value.
    public subscript(key: String) -> [UInt8]? {
        pairs.first { $0.key == key }?.value ?? nil
    }

    /// Whether `key` was sent (with or without a value).
    public func contains(_ key: String) -> Bool { pairs.contains { $0.key == key } }

    /// Parses a header value, within `maxBytes` and `maxPairs`.
    public static func parse(
        _ value: some Collection<UInt8>, maxBytes: Int = 4096, maxPairs: Int = 64
    ) throws(Failure) -> UploadMetadata {
        guard value.count <= maxBytes else { throw .tooLarge }
        var pairs: [Pair] = []
        let bytes = Array(value)
        var trimmed = bytes[...]
        while let first = trimmed.first, first == 0x20 || first == 0x09 { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, last == 0x20 || last == 0x09 { trimmed = trimmed.dropLast() }
        if trimmed.isEmpty { return UploadMetadata() }
        for element in trimmed.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            var item = element[...]
            while let first = item.first, first == 0x20 || first == 0x09 { item = item.dropFirst() }
            while let last = item.last, last == 0x20 || last == 0x09 { item = item.dropLast() }
            guard !item.isEmpty else { throw .emptyKey }
            let space = item.firstIndex(of: 0x20)
            let keyBytes = item[item.startIndex..<(space ?? item.endIndex)]
            guard keyBytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ",") }) else {
                throw .invalidKey
            }
            let key = String(decoding: keyBytes, as: UTF8.self)
            guard !pairs.contains(where: { $0.key == key }) else { throw .duplicateKey(key) }
            var decoded: [UInt8]?
            if let space {
                let encoded = item[(space + 1)...]
                guard let value = Base64.decoded(encoded) else { throw .invalidBase64(key) }
                decoded = value
            }
            pairs.append(Pair(key: key, value: decoded))
            guard pairs.count <= maxPairs else { throw .tooManyPairs }
        }
        return UploadMetadata(pairs: pairs)
    }

    /// The header value: the pairs in order, values Base64-encoded.
    public var serialized: String {
        pairs.map { pair in
            guard let value = pair.value else { return pair.key }
            return pair.key + " " + Base64.encoded(value)
        }.joined(separator: ",")
    }
}
