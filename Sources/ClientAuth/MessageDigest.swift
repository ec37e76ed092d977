import CCrypto

/// The SHA-2 hashes the JWS algorithms use, each fetched from OpenSSL once per process:
/// passing a fetched `EVP_MD` spares OpenSSL 3 the implicit fetch (a lock and a lookup) that
/// `EVP_sha256()` and friends cost on every use.
enum MessageDigest: Sendable {
    case sha256, sha384, sha512

    /// The digest length in bytes.
    var byteCount: Int {
        switch self {
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }

    /// A dense index (0, 1, 2) for tables kept per hash.
    var index: Int {
        switch self {
        case .sha256: 0
        case .sha384: 1
        case .sha512: 2
        }
    }

    /// OpenSSL's name for it.
    var name: String {
        switch self {
        case .sha256: "SHA256"
        case .sha384: "SHA384"
        case .sha512: "SHA512"
        }
    }

    /// The fetched `EVP_MD` (never freed: it lives as long as the process).
    var evp: OpaquePointer {
        switch self {
        case .sha256: FetchedDigests.shared.sha256
        case .sha384: FetchedDigests.shared.sha384
        case .sha512: FetchedDigests.shared.sha512
        }
    }
}

/// The three fetched digests. `EVP_MD` objects are immutable and reference-counted
/// atomically, so one set serves every thread.
private final class FetchedDigests: @unchecked Sendable {
    static let shared = FetchedDigests()

    let sha256: OpaquePointer
    let sha384: OpaquePointer
    let sha512: OpaquePointer

    private init() {
        // The default provider always has the SHA-2 family; no digest means a broken OpenSSL.
        guard let sha256 = EVP_MD_fetch(nil, "SHA256", nil), let sha384 = EVP_MD_fetch(nil, "SHA384", nil),
            let sha512 = EVP_MD_fetch(nil, "SHA512", nil)
        else { fatalError("OpenSSL has no SHA-2 digests") }
        self.sha256 = sha256
        self.sha384 = sha384
        self.sha512 = sha512
    }
}
