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
    private var contexts: [(algorithm: DigestAlgorithm, context: OpaquePointer, method: OpaquePointer)] = []
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
            case .sha256: method = Self.sha256.pointer
            case .sha1: method = Self.sha1.pointer
            case .md5: method = Self.md5.pointer
            case .crc32, .size: method = nil
            }
            if let method, let context = EVP_MD_CTX_new() {
                EVP_DigestInit_ex(context, method, nil)
                contexts.append((algorithm, context, method))
            }
        }
        crc = crc32(0, nil, 0)
    }

    /// A digest method fetched once from the default provider: `EVP_sha256()` and the like are
    /// fetched again at every `EVP_DigestInit_ex` (a lookup and an allocation per part). A
    /// fetched `EVP_MD` is immutable, used from any thread.
    private struct Method: @unchecked Sendable {
        let pointer: OpaquePointer?

        init(_ name: String, fallback: () -> OpaquePointer?) {
            pointer = EVP_MD_fetch(nil, name, nil) ?? fallback()
        }
    }

    private static let sha256 = Method("SHA256") { EVP_sha256() }
    private static let sha1 = Method("SHA1") { EVP_sha1() }
    private static let md5 = Method("MD5") { EVP_md5() }

    deinit {
        for entry in contexts { EVP_MD_CTX_free(entry.context) }
    }

    /// Whether every queued block is hashed (under the pool's lock).
    var isIdle: Bool { blocks.isEmpty && !running }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        size += Int64(bytes.count)
        for entry in contexts { EVP_DigestUpdate(entry.context, bytes.baseAddress, bytes.count) }
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
                let context = contexts.first { $0.algorithm == algorithm }!.context
                return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { digest in
                    var length: UInt32 = 0
                    EVP_DigestFinal_ex(context, digest.baseAddress, &length)
                    return (algorithm, Hex.encode(UnsafeBufferPointer(rebasing: digest[..<Int(length)])))
                }
            }
        }
    }

    /// Starts over for another part, the contexts kept (a part hashed inline only: no pool
    /// thread ever saw this state).
    func reset() {
        for entry in contexts { EVP_DigestInit_ex(entry.context, entry.method, nil) }
        crc = crc32(0, nil, 0)
        size = 0
    }
}
