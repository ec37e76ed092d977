import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The EICAR anti-virus test file, built at run time (its 68 bytes never sit in the tree, where
/// a scanner on a developer's machine would flag the source).
let eicar: [UInt8] = Array(
    ("X5O!P%@AP[4\\PZX54(P^)7CC)7}$" + "EICAR-STANDARD-ANTIVIRUS" + "-TEST-FILE!$H+H*").utf8)

/// The name clamd reports for EICAR with the test's database (`.UNOFFICIAL`: not a Cisco one).
let eicarSignature = "FormGate.Test.EICAR.UNOFFICIAL"

/// Debian's clamd, started on a Unix socket in a temp directory with a one-signature database
/// the test writes (EICAR), no freshclam; stopped by PID when released.
final class Clamd: @unchecked Sendable {
    let directory: String
    var socket: String { directory + "/clamd.sock" }
    var address: String { "unix:" + socket }
    private var server: ServerProcess?

    /// Starts clamd and waits until it answers PING.
    ///
    /// - Parameters:
    ///   - maxFileSize: clamd's `MaxFileSize` (and `MaxScanSize`), e.g. `300M`.
    ///   - streamMaxLength: clamd's `StreamMaxLength`.
    init(maxFileSize: String = "300M", streamMaxLength: String = "300M") throws {
        directory = NSTemporaryDirectory() + "formgate-clamd-\(UUID().uuidString)"
        let manager = FileManager.default
        try manager.createDirectory(atPath: directory + "/db", withIntermediateDirectories: true)
        try manager.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
        let hex = eicar.map { String(format: "%02x", $0) }.joined()
        try "FormGate.Test.EICAR:0:*:\(hex)\n".write(
            toFile: directory + "/db/formgate-test.ndb", atomically: true, encoding: .utf8)
        var conf = """
            Foreground yes
            LocalSocket \(socket)
            DatabaseDirectory \(directory)/db
            TemporaryDirectory \(directory)/tmp
            PidFile \(directory)/clamd.pid
            LogFile \(directory)/clamd.log
            StreamMaxLength \(streamMaxLength)
            MaxFileSize \(maxFileSize)
            MaxScanSize \(maxFileSize)
            AlertExceedsMax yes
            MaxThreads 8

            """
        if getuid() == 0 { conf += "User root\n" }
        try conf.write(toFile: directory + "/clamd.conf", atomically: true, encoding: .utf8)
        server = try ServerProcess(
            "/usr/sbin/clamd", ["-c", directory + "/clamd.conf"], waitForListening: false)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if Self.ping(socket) { return }
            guard server?.process.isRunning == true else { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        let log = (try? String(contentsOfFile: directory + "/clamd.log", encoding: .utf8)) ?? ""
        throw TestFailure("clamd did not start: \(server?.stderr ?? "") \(log)")
    }

    deinit { stop() }

    /// Stops clamd (its socket then refuses connections) and removes its directory.
    func stop() {
        server?.stop()
        server = nil
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Whether clamd at `path` answers `zPING` with `PONG`.
    static func ping(_ path: String) -> Bool {
        guard let fd = connectUnix(path) else { return false }
        defer { close(fd) }
        let command = Array("zPING\0".utf8)
        guard command.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == command.count else {
            return false
        }
        var reply = [UInt8](repeating: 0, count: 16)
        let count = reply.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return count >= 4 && reply.starts(with: Array("PONG".utf8))
    }
}

/// A connected Unix stream socket to `path`, or nil.
func connectUnix(_ path: String) -> Int32? {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return nil }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes.prefix($0.count - 1)) }
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard connected == 0 else {
        close(fd)
        return nil
    }
    return fd
}
