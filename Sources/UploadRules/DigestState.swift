import CCrypto
import CZlib
import HTTPCore

/// A digest algorithm of the `digest:` rule.
public enum DigestAlgorithm: String, Sendable, CaseIterable {
    case sha256, sha1, md5, crc32, size
}

/// The running digests of one part. Used by one thread at a time: the loop thread's while the
/// part is small, then a pool thread per queued block (the pool's lock orders the hand-offs).
final class DigestState: @unchecked Sendable {
    private var contexts: [(DigestAlgorithm, OpaquePointer)] = []
    private var crc: UInt = 0
    private let hasCRC: Bool
    private(set) var size: Int64 = 0
    let algorithms: [DigestAlgorithm]
    /// The queue whose bytes and signal the blocks count against (nil: hashed inline only).
    let queue: DigestQueue?
    // The pool's bookkeeping, under its lock.
    var blocks: [DigestBlock] = []
    var running = false
    var scheduled = false
    /// The part has ended: the thread that hashes the last block signals the queue.
    var ended = false
    /// The part was abandoned: its blocks were dropped, nobody waits for it.
    var cancelled = false

    init(_ algorithms: [DigestAlgorithm], queue: DigestQueue?) {
        self.algorithms = algorithms
        self.queue = queue
        hasCRC = algorithms.contains(.crc32)
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

    /// Whether every queued block is hashed (under the pool's lock).
    var isIdle: Bool { blocks.isEmpty && !running }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        size += Int64(bytes.count)
        for (_, context) in contexts { EVP_DigestUpdate(context, bytes.baseAddress, bytes.count) }
        if hasCRC {
            crc = crc32(crc, bytes.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt32(bytes.count))
        }
    }

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
                return (algorithm, Hex.encode(digest.prefix(Int(length))))
            }
        }
    }
}
