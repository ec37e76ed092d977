/// Why a JWKS document could not be loaded at all.
public enum JWKSetError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The file could not be read, or is over the size limit.
    case unreadable(String)
    /// The document is not valid JSON.
    case invalidJSON(JSONError)
    /// The document is not an object with a `keys` array.
    case noKeysArray
    /// No member of `keys` is usable; each one's reason is given.
    case noUsableKey([JWKSet.SkippedKey])

    public var description: String {
        switch self {
        case .unreadable(let path): "cannot read \(path) (or it is over the size limit)"
        case .invalidJSON(let error): "not JSON: \(error)"
        case .noKeysArray: "no \"keys\" array"
        case .noUsableKey(let skipped):
            "no usable key"
                + (skipped.isEmpty ? "" : ": " + skipped.map(\.description).joined(separator: "; "))
        }
    }
}
