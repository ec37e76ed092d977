import Foundation

/// The package root, found from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

/// The `formgate` binary built by `swift build` (debug).
let formgateBinary = packageRoot.appendingPathComponent(".build/debug/formgate").path

/// A child process (a server under test) that is killed when the value is released.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    private let errorPipe = Pipe()
    private let outputPipe = Pipe()
    /// What the child wrote, as its pipes' readers hand it on.
    private let output = Output()
    /// The readers of its standard error and output (`PipeReader`).
    private var readers: [PipeReader] = []
    /// The address it printed as `listening on HOST:PORT`.
    private(set) var address = ""
    /// Files deleted by `stop()` (the test's config).
    private let temporaryFiles: [String]

    /// Starts `executable` with `arguments` and waits for its `listening on` line.
    init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        waitForListening: Bool = true, removingAtStop temporaryFiles: [String] = []
    )
        throws
    {
        self.temporaryFiles = temporaryFiles
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardError = errorPipe
        process.standardOutput = outputPipe
        if let environment { process.environment = environment }
        try process.run()
        let state = output
        readers = [
            PipeReader(errorPipe) { data in
                state.lock.withLock { state.stderrText += String(decoding: data, as: UTF8.self) }
            },
            PipeReader(outputPipe) { data in
                let lines = data.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                state.lock.withLock {
                    state.stdoutText += String(decoding: data, as: UTF8.self)
                    state.stdoutLines += lines
                }
            },
        ]
        guard waitForListening else { return }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if let range = stderr.range(of: "listening on ") {
                let rest = stderr[range.upperBound...]
                address = String(rest.prefix { !$0.isWhitespace && $0 != "," })
                return
            }
            if !process.isRunning { break }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw TestFailure("\(executable) \(arguments) did not start: \(stderr)")
    }

    var stderr: String { output.lock.withLock { output.stderrText } }
    var stdout: String { output.lock.withLock { output.stdoutText } }
    /// Lines written to standard output so far (access-log lines), counted as they arrive.
    var stdoutLineCount: Int { output.lock.withLock { output.stdoutLines } }

    var port: Int { Int(address.split(separator: ":").last ?? "") ?? 0 }
    var url: String { "http://\(address)" }
    var pid: Int32 { process.processIdentifier }

    /// Peak resident memory (VmHWM) in KiB.
    var peakRSSKiB: Int { statusKiB("VmHWM:") }

    /// Resident memory now (VmRSS) in KiB.
    var residentKiB: Int { statusKiB("VmRSS:") }

    /// A KiB figure from `/proc/PID/status` (-1 when unreadable).
    private func statusKiB(_ key: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
            return -1
        }
        for line in status.split(separator: "\n") where line.hasPrefix(key) {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? -1
        }
        return -1
    }

    /// Open file descriptors.
    var openDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// The access log lines written so far, parsed.
    var accessLog: [[String: Any]] {
        stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    /// The access log once it has at least `count` lines (waits up to 30 s for the pipe).
    func accessLog(atLeast count: Int) -> [[String: Any]] {
        eventually(within: 30) { stdoutLineCount >= count }
        return accessLog
    }

    /// SIGTERM, then SIGKILL after 3 s (a child may have inherited a blocked SIGTERM).
    func stop() {
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(3)
            while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        // Every chunk the child wrote is in before `stop` returns (once: `deinit` stops too).
        let started = readers
        readers = []
        for reader in started { reader.wait() }
        for file in temporaryFiles { try? FileManager.default.removeItem(atPath: file) }
    }

    deinit {
        stop()
    }
}

/// What a child wrote to its standard error and output, under one lock.
private final class Output: @unchecked Sendable {
    let lock = NSLock()
    var stderrText = ""
    var stdoutText = ""
    var stdoutLines = 0
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Starts a demo upstream on a free port.
func startDemoUpstream() throws -> ServerProcess {
    try ServerProcess(formgateBinary, ["demo-upstream", "--listen", "127.0.0.1:0"])
}

/// Writes `yaml` to a temp file and starts `formgate run` with it on a free port.
func startProxy(_ yaml: String, workers: Int = 2, accessLog: String = "stdout") throws -> ServerProcess {
    let path = NSTemporaryDirectory() + "formgate-test-\(UUID().uuidString).yaml"
    try ("listen: 127.0.0.1:0\nworkers: \(workers)\naccess_log: \(accessLog)\n" + yaml).write(
        toFile: path, atomically: true, encoding: .utf8)
    return try ServerProcess(formgateBinary, ["run", "-c", path], removingAtStop: [path])
}

/// Runs a command to completion; returns its exit status and standard output.
@discardableResult
func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: Data) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = try readToEnd(output.fileHandleForReading.fileDescriptor)
    process.waitUntilExit()
    return (process.terminationStatus, data)
}

/// Reads a descriptor until EOF, retrying reads a signal interrupted (Foundation's
/// `readDataToEndOfFile` traps on EINTR, which a test process with child processes can get).
func readToEnd(_ descriptor: Int32) throws -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            data.append(contentsOf: buffer[..<count])
        } else if count == 0 {
            return data
        } else if errno != EINTR {
            throw TestFailure("read: errno \(errno)")
        }
    }
}

/// Finds a tool on PATH; a test that needs it fails (never skips) when it is missing.
func tool(_ name: String) throws -> String {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(directory)/\(name)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    throw TestFailure("\(name) is not installed (make test installs it)")
}

/// The Python that runs the test servers in `Resources/`: `FORMGATE_PYTHON` (the Makefile sets
/// it), else Debian's `/usr/bin/python3`, never whichever `python3` comes first on PATH.
func python3() throws -> String {
    let path = ProcessInfo.processInfo.environment["FORMGATE_PYTHON"] ?? "/usr/bin/python3"
    guard FileManager.default.isExecutableFile(atPath: path) else {
        throw TestFailure("\(path) is not installed (make test installs python3)")
    }
    return path
}

/// Parses a JSON object.
func jsonObject(_ data: Data) throws -> [String: Any] {
    guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
        throw TestFailure("not a JSON object: \(String(decoding: data, as: UTF8.self))")
    }
    return object
}

/// Records a measured figure of a robustness test in `.build/test-figures/NAME.json`, read by
/// `scripts/robustness-report.py` for docs/robustness.md.
func recordFigure(_ name: String, _ figures: [String: Any]) {
    let directory = packageRoot.appendingPathComponent(".build/test-figures")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    var object = figures
    object["date"] = ISO8601DateFormatter().string(from: Date())
    if let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
        try? data.write(to: directory.appendingPathComponent("\(name).json"))
    }
}

/// PHP's built-in server running the compose example's `docker/php/upload.php` on a free port
/// (with `ini` settings given as `-d` options), once it accepts.
func startPHP(ini: [String] = []) throws -> (ServerProcess, Int) {
    let probe = try FakeUpstream(.silent)
    let port = probe.port
    probe.stop()
    let server = try ServerProcess(
        try tool("php"),
        ini.flatMap { ["-d", $0] } + [
            "-S", "127.0.0.1:\(port)", packageRoot.appendingPathComponent("docker/php/upload.php").path,
        ],
        waitForListening: false)
    if eventually(within: 30, { (try? RawClient(port: port)) != nil }) { return (server, port) }
    throw TestFailure("php -S did not start: \(server.stderr)")
}

/// The conformance matrix's Werkzeug server (`Tests/Conformance/werkzeug_server.py`).
func startWerkzeug() throws -> ServerProcess {
    try ServerProcess(
        try tool("python3"), [packageRoot.appendingPathComponent("Tests/Conformance/werkzeug_server.py").path]
    )
}
