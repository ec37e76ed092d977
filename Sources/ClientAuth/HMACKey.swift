import CCrypto

/// A shared secret for HS256/384/512, keyed into OpenSSL once at load.
///
/// For each hash the secret is long enough for (RFC 7518 section 3.2: at least the hash
/// length), an `EVP_MAC_CTX` is initialised with the key once. A verification takes a keyed
/// context from a small pool (or duplicates the template when the pool is empty), re-arms it
/// with `EVP_MAC_init(ctx, NULL, 0, NULL)` (the keyed inner state is copied back: one
/// digest-state copy), and puts it back. Duplicating instead copies the MAC context, the HMAC
/// state and its three digest contexts per token; jwt-bench went from 1.67 to 1.43 us per
/// HS256 token with the pool.
/// The tag is compared with `CRYPTO_memcmp`, whose time does not depend on where the bytes
/// differ.
final class HMACKey: @unchecked Sendable {
    /// The keyed template per hash; `nil` where the secret is too short for it.
    /// Indexed by `MessageDigest.index`: an array, not a dictionary, on the per-token path.
    private let templates: [OpaquePointer?]
    /// Keyed contexts ready for reuse, per hash (at most 16 each).
    private let pools: [MACContextPool]
    /// The secret's length in bytes.
    let byteCount: Int

    /// Keys `secret` for every HS algorithm it is long enough for; `nil` if OpenSSL refuses
    /// or the secret is shorter than 32 bytes (HS256's minimum).
    init?(secret: [UInt8]) {
        byteCount = secret.count
        guard secret.count >= 32, let mac = EVP_MAC_fetch(nil, "HMAC", nil) else { return nil }
        defer { EVP_MAC_free(mac) }
        var templates: [OpaquePointer?] = [nil, nil, nil]
        for digest in [MessageDigest.sha256, .sha384, .sha512] where secret.count >= digest.byteCount {
            guard let context = Self.keyedContext(mac: mac, digest: digest, secret: secret) else {
                for case let context? in templates { EVP_MAC_CTX_free(context) }
                return nil
            }
            templates[digest.index] = context
        }
        self.templates = templates
        pools = (0..<3).map { _ in MACContextPool(limit: 16) }
    }

    deinit {
        for case let context? in templates { EVP_MAC_CTX_free(context) }
    }

    private static func keyedContext(mac: OpaquePointer, digest: MessageDigest, secret: [UInt8])
        -> OpaquePointer?
    {
        guard let context = EVP_MAC_CTX_new(mac) else { return nil }
        // OSSL_PARAM keeps the pointers: both strings must outlive EVP_MAC_init.
        let key = strdup("digest")
        let name = strdup(digest.name)
        defer {
            free(key)
            free(name)
        }
        var parameters = [OSSL_PARAM_construct_utf8_string(key, name, 0), OSSL_PARAM_construct_end()]
        guard EVP_MAC_init(context, secret, secret.count, &parameters) == 1 else {
            ERR_clear_error()
            EVP_MAC_CTX_free(context)
            return nil
        }
        return context
    }

    /// Whether this secret can verify `algorithm`: an HS algorithm whose hash is no longer
    /// than the secret.
    func fits(_ algorithm: JWSAlgorithm) -> Bool {
        guard algorithm.family == .hmac, let digest = algorithm.digest else { return false }
        return templates[digest.index] != nil
    }

    /// Whether `signature` is the `algorithm` tag of `input`. The caller has checked `fits`.
    func verify(_ algorithm: JWSAlgorithm, input: UnsafeRawBufferPointer, signature: UnsafeRawBufferPointer)
        -> Bool
    {
        guard let digest = algorithm.digest, signature.count == digest.byteCount,
            let template = templates[digest.index]
        else { return false }
        let pool = pools[digest.index]
        guard let context = pool.take(orDuplicate: template) else { return false }
        let matches = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { tag in
            var length = 0
            guard EVP_MAC_init(context, nil, 0, nil) == 1,
                EVP_MAC_update(context, input.baseAddress, input.count) == 1,
                EVP_MAC_final(context, tag.baseAddress, &length, tag.count) == 1, length == signature.count
            else {
                ERR_clear_error()
                return false
            }
            return CRYPTO_memcmp(tag.baseAddress, signature.baseAddress, length) == 0
        }
        pool.give(context)
        return matches
    }
}
