import HTTPCore

/// A resumable upload's id: 128 random bits as 32 lowercase hex digits.
///
/// The id names the upload's files in the store and ends its URL, so nothing but exactly that
/// form is ever accepted from a client: no path separator, dot, escape or NUL can reach a
/// file name.
public struct UploadID: Hashable, Sendable, CustomStringConvertible {
    /// The 32 hex digits.
    public let hex: String

    /// A fresh id from the kernel's random source (`SecureRandom`).
    public static func random() -> UploadID {
        var random = SecureRandom()
        var bytes: [UInt8] = []
        for _ in 0..<2 { withUnsafeBytes(of: random.next()) { bytes += $0 } }
        return UploadID(digits: bytes)
    }

    /// The id whose 32 digits spell `bytes` (16 of them) in hex.
    private init(digits bytes: [UInt8]) {
        var text: [UInt8] = []
        text.reserveCapacity(32)
        for byte in bytes {
            text.append(Hex.digits[Int(byte >> 4)])
            text.append(Hex.digits[Int(byte & 0x0F)])
        }
        hex = String(decoding: text, as: UTF8.self)
    }

    /// The id of the final upload that concatenates `parts` for `owner` with `metadata`: the
    /// first 128 bits of their SHA-256. The same creation twice names the same upload, so a
    /// client that lost the answer to its final creation and sends it again finds the upload
    /// (and its delivery's answer) instead of having the file delivered a second time. It is
    /// no easier to guess than the partial uploads' own ids.
    public static func final(of parts: [UploadID], owner: String?, metadata: UploadMetadata) -> UploadID {
        let hasher = ChecksumHasher(.sha256)
        var input = Array("formgate-tus-final\n\(owner ?? "")\n\(metadata.serialized)\n".utf8)
        for part in parts { input += Array(part.hex.utf8) + [0x20] }
        input.withUnsafeBytes { hasher.update($0) }
        return UploadID(digits: Array(hasher.finish().prefix(16)))
    }

    /// The id `text` names, if it is exactly 32 lowercase hex digits.
    public init?(_ text: some StringProtocol) {
        let utf8 = Array(text.utf8)
        guard utf8.count == 32,
            utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
        else { return nil }
        hex = String(text)
    }

    public var description: String { hex }
}
