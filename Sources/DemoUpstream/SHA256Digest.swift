import CCrypto

/// An incremental SHA-256 (OpenSSL EVP), for the demo upstream's receipts.
final class SHA256Digest {
    private let context: OpaquePointer

    init() {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, EVP_sha256(), nil)
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        EVP_DigestUpdate(context, bytes.baseAddress, bytes.count)
    }

    /// The digest as lower-case hex; the digest cannot be updated afterwards.
    func finalizeHex() -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in digest.prefix(Int(length)) {
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
