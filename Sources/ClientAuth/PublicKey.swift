import CCrypto

/// An OpenSSL public key (`EVP_PKEY`) made once at load and freed with the last reference.
///
/// Verification only reads the key; OpenSSL 3 allows one `EVP_PKEY` to be used by several
/// threads at once for that, so the wrapper is shared freely.
final class PublicKey: @unchecked Sendable {
    /// The kind of key, which fixes the algorithms it verifies.
    enum Kind: Equatable {
        case rsa, p256, p384, ed25519
    }

    let kind: Kind
    /// The owned `EVP_PKEY`.
    private let key: OpaquePointer
    /// The signature length in bytes: the modulus size for RSA, `2 × coordinate` for ECDSA.
    let signatureByteCount: Int
    /// The key size in bits.
    let bits: Int

    /// Takes ownership of `key`.
    private init(kind: Kind, key: OpaquePointer) {
        self.kind = kind
        self.key = key
        bits = Int(EVP_PKEY_get_bits(key))
        switch kind {
        case .rsa: signatureByteCount = Int(EVP_PKEY_get_size(key))
        case .p256: signatureByteCount = 64
        case .p384: signatureByteCount = 96
        case .ed25519: signatureByteCount = 64
        }
    }

    deinit {
        EVP_PKEY_free(key)
    }

    /// A key from a DER SubjectPublicKeyInfo; `nil` when OpenSSL refuses it (for EC keys, a
    /// point not on the curve) or bytes follow the structure.
    static func fromPublicKeyInfo(_ der: [UInt8], kind: Kind) -> PublicKey? {
        der.withUnsafeBufferPointer { buffer -> PublicKey? in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let key = d2i_PUBKEY(nil, &cursor, buffer.count) else {
                ERR_clear_error()
                return nil
            }
            let consumed = cursor.map { $0 - buffer.baseAddress! } ?? 0
            guard consumed == buffer.count else {
                EVP_PKEY_free(key)
                return nil
            }
            return PublicKey(kind: kind, key: key)
        }
    }

    /// An Ed25519 key from its 32 raw bytes.
    static func ed25519(_ raw: [UInt8]) -> PublicKey? {
        guard raw.count == 32 else { return nil }
        guard let key = EVP_PKEY_new_raw_public_key_ex(nil, "ED25519", nil, raw, raw.count) else {
            ERR_clear_error()
            return nil
        }
        return PublicKey(kind: .ed25519, key: key)
    }

    /// Whether this key verifies `algorithm` (the key decides: an RSA key never verifies an
    /// HMAC, a P-256 key only ES256).
    func fits(_ algorithm: JWSAlgorithm) -> Bool {
        switch (kind, algorithm.family) {
        case (.rsa, .rsaPKCS1), (.rsa, .rsaPSS): true
        case (.p256, .ecdsa): algorithm == .es256
        case (.p384, .ecdsa): algorithm == .es384
        case (.ed25519, .edDSA): true
        default: false
        }
    }

    /// Whether `signature` is a valid `algorithm` signature of `input` under this key.
    /// The caller has checked `fits(algorithm)`.
    func verify(_ algorithm: JWSAlgorithm, input: UnsafeRawBufferPointer, signature: UnsafeRawBufferPointer)
        -> Bool
    {
        guard signature.count == signatureByteCount, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer?
        guard EVP_DigestVerifyInit(context, &keyContext, algorithm.digest?.evp, nil, key) == 1 else {
            ERR_clear_error()
            return false
        }
        if algorithm.family == .rsaPSS, let digest = algorithm.digest {
            guard EVP_PKEY_CTX_set_rsa_padding(keyContext, RSA_PKCS1_PSS_PADDING) == 1,
                EVP_PKEY_CTX_set_rsa_pss_saltlen(keyContext, Int32(digest.byteCount)) == 1,
                EVP_PKEY_CTX_set_rsa_mgf1_md(keyContext, digest.evp) == 1
            else {
                ERR_clear_error()
                return false
            }
        }
        let verified: Int32
        if algorithm.family == .ecdsa {
            let der = DER.ecdsaSignature(joseSignature: signature)
            verified = EVP_DigestVerify(context, der, der.count, input.baseAddress, input.count)
        } else {
            verified = signature.withMemoryRebound(to: UInt8.self) { signature in
                EVP_DigestVerify(
                    context, signature.baseAddress, signature.count, input.baseAddress, input.count)
            }
        }
        if verified != 1 { ERR_clear_error() }
        return verified == 1
    }
}
