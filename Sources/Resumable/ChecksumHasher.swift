import CCrypto

/// The running digest of one PATCH's bytes for `Upload-Checksum` (OpenSSL EVP). Used on the
/// store thread, beside the writes: a large PATCH is never hashed on an event loop.
public final class ChecksumHasher {
    private let context: OpaquePointer
    public let algorithm: TusHeaders.ChecksumAlgorithm

    public init(_ algorithm: TusHeaders.ChecksumAlgorithm) {
        self.algorithm = algorithm
        let method: OpaquePointer? =
            switch algorithm {
            case .sha1: EVP_sha1()
            case .sha256: EVP_sha256()
            case .md5: EVP_md5()
            }
        guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, method, nil) == 1 else {
            fatalError("OpenSSL could not start a \(algorithm) digest")
        }
        self.context = context
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    /// The digest of every byte given.
    public func finish() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return Array(digest.prefix(Int(length)))
    }
}
