import CCrypto

/// SHA-256 (OpenSSL EVP), one shot: a payload's `x-amz-content-sha256`, a tail's check sum.
enum SHA256 {
    /// The 32-byte digest of `bytes`.
    static func digest(_ bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        guard let context = EVP_MD_CTX_new() else { fatalError("OpenSSL could not start a sha256 digest") }
        defer { EVP_MD_CTX_free(context) }
        let done =
            EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1
            && EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) == 1
            && EVP_DigestFinal_ex(context, &out, &length) == 1
        precondition(done && length == 32, "OpenSSL SHA-256 failed")
        return out
    }

    /// The digest of `bytes`.
    static func digest(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { digest($0) }
    }
}
