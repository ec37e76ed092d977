import CCrypto
public import HTTP1
import HTTPCore

/// The API keys of a route (`auth: { api_keys: { file, header } }`): a name per key, the
/// file holding only each key's SHA-256, so reading the file gives no key away.
///
/// A presented key is hashed and looked up by its digest. The lookup is a dictionary keyed
/// by the digest: its timing depends only on the digest of what the client sent, which the
/// client can compute itself, and finding a stored digest by timing would still leave a
/// SHA-256 preimage to find. The matching entry is then compared with `CRYPTO_memcmp` anyway,
/// so no byte comparison of secret material ever stops early.
public struct APIKeySet: Sendable {
    /// The header field the key is read from (default `X-Api-Key`).
    public let header: String
    /// The longest key accepted, in bytes (default 256); longer ones are refused unhashed.
    public let maximumKeyBytes: Int
    private let names: [KeyDigest: String]

    /// Why a request's key was not accepted.
    public enum Rejection: String, Error, Sendable {
        /// No key header.
        case missing
        /// More than one key header.
        case ambiguous
        /// Longer than `maximumKeyBytes`, or empty.
        case malformed
        /// Not a key of the file.
        case unknownKey = "unknown_key"
    }

    /// The number of keys.
    public var count: Int { names.count }

    /// Loads a key file: one `name: sha256hex` per line (64 hex digits, either case), blank
    /// lines and lines starting with `#` ignored. Names are 1 to 64 of `A-Z a-z 0-9 . _ - @ +`
    /// (they appear in the access log as the identity). Duplicate names or digests, and a
    /// file without keys, are errors with the line number.
    public init(
        fileContents: some Collection<UInt8>, header: String = "X-Api-Key", maximumKeyBytes: Int = 256
    ) throws(APIKeyFileError) {
        self.header = header
        self.maximumKeyBytes = maximumKeyBytes
        var names: [KeyDigest: String] = [:]
        var seenNames = Set<String>()
        let bytes = Array(fileContents)
        var lineNumber = 0
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            let trimmed = Self.trimmed(line)
            if trimmed.isEmpty || trimmed.first == UInt8(ascii: "#") { continue }
            guard let colon = trimmed.firstIndex(of: UInt8(ascii: ":")) else {
                throw APIKeyFileError(.missingColon, line: lineNumber)
            }
            let name = Self.trimmed(trimmed[..<colon])
            guard (1...64).contains(name.count), name.allSatisfy(Self.isNameByte) else {
                throw APIKeyFileError(.invalidName, line: lineNumber)
            }
            guard let digest = KeyDigest(hex: Self.trimmed(trimmed[(colon + 1)...])) else {
                throw APIKeyFileError(.invalidDigest, line: lineNumber)
            }
            let nameText = String(decoding: name, as: UTF8.self)
            guard seenNames.insert(nameText).inserted else {
                throw APIKeyFileError(.duplicateName(nameText), line: lineNumber)
            }
            guard names.updateValue(nameText, forKey: digest) == nil else {
                throw APIKeyFileError(.duplicateDigest, line: lineNumber)
            }
        }
        guard !names.isEmpty else { throw APIKeyFileError(.noKeys, line: lineNumber) }
        self.names = names
    }

    /// Reads and loads a key file (at configuration load, never on the request path).
    public init(contentsOfFile path: String, header: String = "X-Api-Key", maximumKeyBytes: Int = 256)
        throws(APIKeyFileError)
    {
        guard let bytes = ConfigurationFile.contents(of: path, maximumBytes: 1 << 20) else {
            throw APIKeyFileError(.unreadable(path), line: 0)
        }
        try self.init(fileContents: bytes, header: header, maximumKeyBytes: maximumKeyBytes)
    }

    /// The name of `key`, or `nil` if it is not in the set (or over the length limit).
    public func lookup(_ key: some Collection<UInt8>) -> String? {
        guard !key.isEmpty, key.count <= maximumKeyBytes else { return nil }
        let presented = KeyDigest(hashing: Array(key))
        guard let entry = names.index(forKey: presented) else { return nil }
        return names[entry].key.constantTimeEquals(presented) ? names[entry].value : nil
    }

    /// The name of the key in `head`'s key header, or why there is none.
    public func identify(_ head: RequestHead) -> Result<String, Rejection> {
        switch head.headers.count(of: header) {
        case 0: return .failure(.missing)
        case 1: break
        default: return .failure(.ambiguous)
        }
        guard let key = head.headers.firstValue(header), !key.isEmpty, key.count <= maximumKeyBytes else {
            return .failure(.malformed)
        }
        guard let name = lookup(key) else { return .failure(.unknownKey) }
        return .success(name)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"),
            UInt8(ascii: "@"), UInt8(ascii: "+"):
            true
        default: false
        }
    }

    private static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var slice = bytes
        while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 || last == 0x0D { slice = slice.dropLast() }
        return slice
    }
}
