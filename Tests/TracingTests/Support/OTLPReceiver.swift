import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `Resources/otlp_receiver.py serve` on a free loopback port, under the SDK venv's python:
/// a collector that parses every export with opentelemetry-proto and reports it on stdout.
/// Stopped (SIGTERM, then SIGKILL by its PID) by `stop()` or when released.
final class OTLPReceiver: @unchecked Sendable {
    /// One POST the receiver answered.
    struct Answer {
        var request: Int
        var status: Int
        /// `time.monotonic()` in the receiver when it answered.
        var time: Double
        /// `(traceId, spanId, name)` of each span, in order.
        var spans: [(traceID: String, spanID: String, name: String)]
        /// What the receiver found wrong with the JSON (nothing, for a good export).
        var errors: [String]
    }

    private let process = Process()
    private let lock = NSLock()
    private var stdoutText = ""
    private var stderrText = ""
    private var readers: [Thread] = []
    private let finished = DispatchSemaphore(value: 0)
    /// The port it listens on.
    private(set) var port = 0

    /// Starts the receiver with `options` (`--responses 503,200`, `--retry-after 1`, `--stall`)
    /// and waits for its `listening on` line.
    init(_ options: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: try sdkPython())
        process.arguments = [resourcePath("otlp_receiver.py"), "serve"] + options
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        readers = [
            read(output) { [self] text in lock.withLock { stdoutText += text } },
            read(errors) { [self] text in lock.withLock { stderrText += text } },
        ]
        let started = eventually(within: 30) {
            let text = lock.withLock { stderrText }
            guard let range = text.range(of: "listening on 127.0.0.1:") else { return !process.isRunning }
            port = Int(text[range.upperBound...].prefix { $0.isNumber }) ?? 0
            return true
        }
        guard started, port > 0 else { throw TestFailure("otlp_receiver.py did not start: \(stderr)") }
    }

    deinit { stop() }

    var stderr: String { lock.withLock { stderrText } }

    /// `http://127.0.0.1:PORT/v1/traces`.
    var url: String { "http://127.0.0.1:\(port)/v1/traces" }

    /// How many POSTs have arrived (their bodies read, whether answered yet or not).
    var arrivals: Int { records("arrived").count }

    /// The POSTs answered so far, in the order they were answered.
    var answers: [Answer] {
        records("answered").map { record in
            Answer(
                request: record["request"] as? Int ?? -1, status: record["status"] as? Int ?? 0,
                time: record["time"] as? Double ?? 0,
                spans: (record["spans"] as? [[String]] ?? []).map { ($0[0], $0[1], $0[2]) },
                errors: record["errors"] as? [String] ?? ["no errors list"])
        }
    }

    /// The spans of answers with a 2xx status.
    var acceptedSpans: [(traceID: String, spanID: String, name: String)] {
        answers.filter { (200..<300).contains($0.status) }.flatMap(\.spans)
    }

    /// Lets stalled POSTs (`--stall`) be answered.
    func release() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { Glibc.close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw TestFailure("cannot connect to the receiver: errno \(errno)") }
        let request = Array("GET /release HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        _ = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
    }

    /// SIGTERM, then SIGKILL after 5 s; returns once its output has been read to the end.
    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            if !eventually(within: 5, { !process.isRunning }) { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        for _ in readers { _ = finished.wait(timeout: .now() + 5) }
        readers = []
    }

    private func records(_ event: String) -> [[String: Any]] {
        let text = lock.withLock { stdoutText }
        return text.split(separator: "\n").compactMap { line in
            guard let record = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                record["event"] as? String == event
            else { return nil }
            return record
        }
    }

    /// Reads `pipe` to its end on a thread of its own (a blocking `read`, no dispatch source).
    private func read(_ pipe: Pipe, _ onText: @escaping @Sendable (String) -> Void) -> Thread {
        let thread = Thread { [finished] in
            let descriptor = pipe.fileHandleForReading.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            var pending: [UInt8] = []
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                pending += buffer[0..<count]
                // Whole lines only, so a record is never seen half-written.
                if let newline = pending.lastIndex(of: 0x0A) {
                    onText(String(decoding: pending[...newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
            if !pending.isEmpty { onText(String(decoding: pending, as: UTF8.self)) }
            finished.signal()
        }
        thread.start()
        return thread
    }
}
