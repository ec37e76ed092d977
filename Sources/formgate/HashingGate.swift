import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A test hook only: `FORMGATE_TEST_HASHING_GATE=FIFO` holds the hashing threads (and
/// `FORMGATE_TEST_SPOOL_GATE=FIFO` the spool writers) still until a test lets them go, so a
/// test can show that a worker serves its other clients meanwhile.
///
/// The first thread to reach its first block opens the FIFO for reading, which blocks
/// until a writer opens it, then reads until the writer closes it; the others wait for it.
/// After that the gate stays open for the life of the process. Nothing polls or sleeps.
final class HashingGate: Sendable {
    private let path: String
    private let opened = Mutex(false)

    /// The gate the environment's `variable` names, if any.
    static func fromEnvironment(_ variable: String = "FORMGATE_TEST_HASHING_GATE") -> HashingGate? {
        guard let value = getenv(variable) else { return nil }
        let path = String(cString: value)
        return path.isEmpty ? nil : HashingGate(path: path)
    }

    private init(path: String) {
        self.path = path
    }

    /// Blocks the calling thread until the gate has been opened and closed once.
    func pass() {
        opened.withLock { opened in
            guard !opened else { return }
            let fd = open(path, O_RDONLY)
            if fd >= 0 {
                var byte: UInt8 = 0
                while true {
                    let count = read(fd, &byte, 1)
                    if count > 0 || (count < 0 && errno == EINTR) { continue }
                    break
                }
                close(fd)
            }
            opened = true
        }
    }
}
