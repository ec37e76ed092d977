import HTTPCore
/// What the store keeps about one resumable upload besides its bytes: the small info record
/// written (atomically) when the upload is created and each time its offset is committed.
public struct UploadInfo: Equatable, Sendable {
    /// How the upload takes part in the concatenation extension.
    public enum Concatenation: Equatable, Sendable {
        /// An ordinary upload.
        case none
        /// A partial upload: never delivered on its own.
        case partial
        /// A final upload made of these partial uploads, in order.
        case final([UploadID])
    }

    public var id: UploadID
    /// `Upload-Length`; nil while the length is deferred.
    public var length: Int64?
    /// The bytes stored and committed (fsync'd): the offset HEAD reports.
    public var offset: Int64
    /// The `Upload-Metadata` received at creation, re-serialized.
    public var metadata: UploadMetadata
    /// The identity that created the upload (nil on a route without `auth:`); only it may
    /// touch the upload.
    public var owner: String?
    /// Unix seconds: creation, and the expiry (moved by each PATCH).
    public var createdAt: Int64
    public var expiresAt: Int64
    public var concatenation: Concatenation

    public init(
        id: UploadID, length: Int64?, offset: Int64 = 0, metadata: UploadMetadata = UploadMetadata(),
        owner: String? = nil, createdAt: Int64, expiresAt: Int64, concatenation: Concatenation = .none
    ) {
        self.id = id
        self.length = length
        self.offset = offset
        self.metadata = metadata
        self.owner = owner
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.concatenation = concatenation
    }

    /// Whether every byte has arrived (a deferred length never is).
    public var isComplete: Bool { length.map { offset == $0 } ?? false }

    /// Whether the upload is to be delivered now: complete, and not a partial upload (which is
    /// delivered only as part of a final one).
    public var isDeliverable: Bool {
        guard isComplete else { return false }
        if case .partial = concatenation { return false }
        return true
    }

    /// Why a stored record could not be read.
    public struct DecodingError: Error, Equatable, Sendable {
        public var line: Int
        public var reason: String
    }

    /// The record as stored: one `key value` line per field, values that are not plain
    /// numbers or ids in Base64, so no byte a client chose can break a line.
    public var encoded: [UInt8] {
        var lines = [
            "formgate-tus 1", "id \(id)", "offset \(offset)", "created \(createdAt)", "expires \(expiresAt)",
        ]
        if let length { lines.append("length \(length)") }
        if !metadata.pairs.isEmpty {
            lines.append("metadata " + Base64.encoded(Array(metadata.serialized.utf8)))
        }
        if let owner { lines.append("owner " + Base64.encoded(Array(owner.utf8))) }
        switch concatenation {
        case .none: break
        case .partial: lines.append("concat partial")
        case .final(let parts): lines.append("concat final " + parts.map(\.hex).joined(separator: " "))
        }
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// Reads a record `encoded` wrote.
    public static func decode(_ bytes: [UInt8]) throws(DecodingError) -> UploadInfo {
        let text = String(decoding: bytes, as: UTF8.self)
        guard text.hasSuffix("\n") else { throw DecodingError(line: 0, reason: "truncated") }
        var fields: [String: String] = [:]
        for (number, line) in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
            .enumerated()
        {
            if number == 0 {
                guard line == "formgate-tus 1" else {
                    throw DecodingError(line: 1, reason: "not a tus info record")
                }
                continue
            }
            guard let space = line.firstIndex(of: " ") else {
                throw DecodingError(line: number + 1, reason: "no value")
            }
            let key = String(line[..<space])
            guard fields[key] == nil else { throw DecodingError(line: number + 1, reason: "repeated \(key)") }
            fields[key] = String(line[line.index(after: space)...])
        }
        func number(_ key: String, required: Bool = true) throws(DecodingError) -> Int64? {
            guard let value = fields[key] else {
                if required { throw DecodingError(line: 0, reason: "no \(key)") }
                return nil
            }
            guard let parsed = TusHeaders.nonNegativeInteger(value.utf8) else {
                throw DecodingError(line: 0, reason: "bad \(key)")
            }
            return parsed
        }
        guard let idText = fields["id"], let id = UploadID(idText) else {
            throw DecodingError(line: 0, reason: "bad id")
        }
        var metadata = UploadMetadata()
        if let encoded = fields["metadata"] {
            guard let raw = Base64.decoded(encoded.utf8),
                let parsed = try? UploadMetadata.parse(raw, maxBytes: .max)
            else { throw DecodingError(line: 0, reason: "bad metadata") }
            metadata = parsed
        }
        var owner: String?
        if let encoded = fields["owner"] {
            guard let raw = Base64.decoded(encoded.utf8) else {
                throw DecodingError(line: 0, reason: "bad owner")
            }
            owner = String(decoding: raw, as: UTF8.self)
        }
        var concatenation = Concatenation.none
        if let value = fields["concat"] {
            if value == "partial" {
                concatenation = .partial
            } else if value.hasPrefix("final ") {
                var parts: [UploadID] = []
                for text in value.dropFirst("final ".count).split(separator: " ") {
                    guard let part = UploadID(text) else {
                        throw DecodingError(line: 0, reason: "bad concat")
                    }
                    parts.append(part)
                }
                concatenation = .final(parts)
            } else {
                throw DecodingError(line: 0, reason: "bad concat")
            }
        }
        let info = UploadInfo(
            id: id, length: try number("length", required: false), offset: try number("offset")!,
            metadata: metadata, owner: owner, createdAt: try number("created")!,
            expiresAt: try number("expires")!, concatenation: concatenation)
        if let length = info.length, info.offset > length {
            throw DecodingError(line: 0, reason: "offset past length")
        }
        return info
    }
}
