import CCrypto
import CZlib

/// A digest algorithm of the `digest:` rule.
public enum DigestAlgorithm: String, Sendable, CaseIterable {
    case sha256, sha1, md5, crc32, size
}

/// Computes the configured digests of one part as its bytes stream by.
final class PartDigests {
    private var contexts: [(DigestAlgorithm, OpaquePointer)] = []
    private var crc: UInt = 0
    private var size: Int64 = 0
    let algorithms: [DigestAlgorithm]

    init(_ algorithms: [DigestAlgorithm]) {
        self.algorithms = algorithms
        for algorithm in algorithms {
            let method: OpaquePointer?
            switch algorithm {
            case .sha256: method = EVP_sha256()
            case .sha1: method = EVP_sha1()
            case .md5: method = EVP_md5()
            case .crc32, .size: method = nil
            }
            if let method, let context = EVP_MD_CTX_new() {
                EVP_DigestInit_ex(context, method, nil)
                contexts.append((algorithm, context))
            }
        }
        crc = crc32(0, nil, 0)
    }

    deinit {
        for (_, context) in contexts { EVP_MD_CTX_free(context) }
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        size += Int64(bytes.count)
        for (_, context) in contexts { EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) }
        if algorithms.contains(.crc32) {
            crc = crc32(crc, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count))
        }
    }

    /// The results, in the configured order: hex for hashes, decimal for crc32 and size.
    func finish() -> [(DigestAlgorithm, String)] {
        algorithms.map { algorithm in
            switch algorithm {
            case .size:
                return (algorithm, "\(size)")
            case .crc32:
                return (algorithm, "\(crc)")
            default:
                let context = contexts.first { $0.0 == algorithm }!.1
                var digest = [UInt8](repeating: 0, count: 64)
                var length: UInt32 = 0
                EVP_DigestFinal_ex(context, &digest, &length)
                return (algorithm, hex(digest.prefix(Int(length))))
            }
        }
    }
}

func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    for byte in bytes {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}
