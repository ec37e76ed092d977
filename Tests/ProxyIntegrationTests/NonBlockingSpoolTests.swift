import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The loop never waits for the disk: `request_body: buffer` spools are written by the
/// worker's spool writer thread (`fg-spool-0`), held here at `FORMGATE_TEST_SPOOL_GATE` (a
/// FIFO: the writer opens it for reading before its first write and waits until the test
/// opens and closes its writing end). One worker. Client A uploads 48 MiB to a buffer route:
/// the worker must pause A once 1 MiB waits for the disk, not wait itself, and not buffer the
/// rest. Meanwhile client B's upload on the same worker is answered in full. Then the gate
/// opens, A's spool is written, and only then does A's body go upstream, byte-exact with an
/// exact Content-Length.
///
/// With spool writes on the loop thread no thread reaches the gate (the test fails there), and
/// a loop that waited for a blocked writer never answers B. The checks that A was not read on
/// (its send unfinished, the RSS) cannot fail on a pushing-back proxy, but catch one that does
/// not push back only if it reads A's 48 MiB before B is answered (a debug build does not:
/// with `backlogged` forced false this test passed); `SpoolBacklogTests` pins the pause down.
@Suite struct NonBlockingSpoolTests {
    static let size = 48 << 20

    static func config(large: String, small: String, spoolDirectory: String) -> String {
        """
        listen: 127.0.0.1:0
        workers: 1
        access_log: stdout
        temp_dir: \(spoolDirectory)
        upstream: \(small)
        routes:
          - match: { path: /large }
            upstream: \(large)
            request_body: buffer
            multipart: {}
          - match: { path: /small }
            multipart:
              digest: { algorithms: [sha256] }

        """
    }

    /// The resident set of process `pid`, in bytes (`VmRSS`).
    static func residentBytes(_ pid: Int32) -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
    }

    /// The names of process `pid`'s threads.
    static func threadNames(_ pid: Int32) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    @Test func aSecondClientIsAnsweredWhileTheSpoolDiskIsHeld() throws {
        let gate = NSTemporaryDirectory() + "formgate-spoolgate-\(UUID().uuidString)"
        guard mkfifo(gate, 0o600) == 0 else { throw TestFailure("mkfifo \(gate): errno \(errno)") }
        defer { unlink(gate) }
        let spoolDirectory = NSTemporaryDirectory() + "formgate-spools-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: spoolDirectory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: spoolDirectory) }
        let large = try FakeUpstream(.silent)
        let small = try startDemoUpstream()
        let path = NSTemporaryDirectory() + "formgate-spoolgate-\(UUID().uuidString).yaml"
        try Self.config(large: large.url, small: small.url, spoolDirectory: spoolDirectory).write(
            toFile: path, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["FORMGATE_TEST_SPOOL_GATE"] = gate
        let proxy = try ServerProcess(
            formgateBinary, ["run", "-c", path], environment: environment, removingAtStop: [path])
        let startRSS = Self.residentBytes(proxy.pid)

        // A: 48 MiB to the buffer route, sent from its own thread (the proxy stops reading it).
        let content = (0..<Self.size).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        let clientA = try RawClient(port: proxy.port)
        let requestA = NonBlockingDigestTests.upload(content, path: "/large", close: true)
        let sentA = Counter()
        let sender = Thread {
            clientA.send(requestA)
            sentA.add(1)
        }
        sender.start()

        // The writer took A's first block and waits at the gate (opening the writing end
        // succeeds only while a reader has it open); held open, the descriptor is the gate.
        var writer: Int32 = -1
        let held = eventually(within: 60) {
            writer = open(gate, O_WRONLY | O_NONBLOCK)
            return writer >= 0
        }
        try #require(
            held, "no spool writer reached the gate: spools are written on the loop (or the hook is unwired)")
        defer { if writer >= 0 { close(writer) } }
        #expect(Self.threadNames(proxy.pid).contains("fg-spool-0"), "\(Self.threadNames(proxy.pid))")

        // B, on the same (only) worker, while A's spool cannot be written.
        let fileB = Array((0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let clientB = try RawClient(port: proxy.port)
        clientB.send(NonBlockingDigestTests.upload(fileB, path: "/small", close: true))
        let response = clientB.readAll(timeout: 30)
        let answer = try NonBlockingDigestTests.parse(response)
        #expect(answer.status == 200, "B: \(String(decoding: response.prefix(200), as: UTF8.self))")
        #expect(answer.complete, "B's answer was cut short (\(response.count) bytes)")
        let receipt = try jsonObject(Data(answer.body))
        let files = try #require(receipt["files"] as? [[String: Any]])
        #expect(files.first?["sha256"] as? String == Digest.hex(fileB))
        #expect(files.first?["size"] as? Int == fileB.count)

        // A is held: nothing of it went upstream, the proxy pushed back (A's send cannot have
        // finished: 48 MiB is far more than the socket buffers and the 1 MiB in flight), and
        // the proxy did not buffer it.
        #expect(large.byteCount == 0, "A went upstream before its spool was on disk")
        #expect(sentA.value == 0, "the proxy read all of A while its spool was held")
        let heldRSS = Self.residentBytes(proxy.pid)
        #expect(
            heldRSS - startRSS < 24 << 20, "RSS grew by \((heldRSS - startRSS) >> 20) MiB while A was held")

        // Open the gate: the writer reads its end of file and writes; A completes.
        close(writer)
        writer = -1
        try #require(
            eventually(within: 120) {
                large.byteCount > Self.size && ForwardedRequest(large.streams.first ?? []).isComplete
            }, "A did not complete after the gate opened (\(large.byteCount) bytes upstream)")
        let forwarded = ForwardedRequest(large.streams.first ?? [])
        #expect(forwarded.contentLength == forwarded.body.count)
        #expect(!forwarded.chunked)
        let start = try #require(forwarded.body.firstRange(of: content.prefix(4096))).lowerBound
        #expect(
            Digest.hex(Array(forwarded.body[start..<min(start + Self.size, forwarded.body.count)]))
                == Digest.hex(content), "A's file bytes differ upstream")
        #expect(sentA.value == 1)
        proxy.stop()
    }

    /// Which thread does what to the spool, from `strace -f`: the loop thread (`formgate-w0`)
    /// creates the spool file, the writer thread (`fg-spool-0`) makes every write(2) to it,
    /// and the loop makes none. A 3 MiB upload to a buffer route, byte-exact at the demo
    /// upstream. Fails when strace is missing.
    @Test func spoolWritesRunOnTheWriterThread() throws {
        let strace = try tool("strace")
        let upstream = try startDemoUpstream()
        let spoolDirectory = NSTemporaryDirectory() + "formgate-spools-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: spoolDirectory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: spoolDirectory) }
        let trace = NSTemporaryDirectory() + "formgate-strace-\(UUID().uuidString).txt"
        defer { unlink(trace) }
        let path = NSTemporaryDirectory() + "formgate-strace-\(UUID().uuidString).yaml"
        try Self.config(large: upstream.url, small: upstream.url, spoolDirectory: spoolDirectory).write(
            toFile: path, atomically: true, encoding: .utf8)
        let traced = try ServerProcess(
            strace,
            ["-f", "-qq", "-o", trace, "-e", "trace=openat,write,close", formgateBinary, "run", "-c", path],
            removingAtStop: [path])
        defer { traced.stop() }
        let children = try String(
            contentsOfFile: "/proc/\(traced.pid)/task/\(traced.pid)/children", encoding: .utf8)
        let proxy = try #require(Int32(children.split(separator: " ").first ?? ""), "no proxy under strace")

        let content = (0..<(3 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 11) }
        let client = try RawClient(port: traced.port)
        client.send(NonBlockingDigestTests.upload(content, path: "/large", close: true))
        let answer = try NonBlockingDigestTests.parse(client.readAll(timeout: 60))
        #expect(answer.status == 200)
        let receipt = try jsonObject(Data(answer.body))
        let files = try #require(receipt["files"] as? [[String: Any]])
        #expect(files.first?["sha256"] as? String == Digest.hex(content))
        let names = Dictionary(
            uniqueKeysWithValues: Self.threadIDs(proxy).map { ($0, Self.threadName(proxy, $0)) })
        // The proxy ends first: strace, signalled, would detach and leave it running.
        kill(proxy, SIGTERM)
        #expect(eventually(within: 30) { kill(proxy, 0) != 0 }, "the proxy did not stop")
        // strace writes its log buffered, and flushes it when it exits after the proxy: read
        // the log only then (read earlier, under load, it lacked the spool's calls).
        #expect(eventually(within: 30) { !traced.process.isRunning }, "strace did not exit")

        let calls = try Self.spoolCalls(String(contentsOfFile: trace, encoding: .utf8))
        #expect(names[calls.opener] == "formgate-w0", "the spool was opened by \(names[calls.opener] ?? "?")")
        #expect(calls.writes.values.reduce(0, +) >= content.count / 65_536, "\(calls.writes)")
        #expect(
            calls.writes.keys.map { names[$0] ?? "?" } == ["fg-spool-0"],
            "spool write(2)s by \(calls.writes.map { "\(names[$0.key] ?? "?"): \($0.value)" })")
    }

    /// The log parser on strace's own layout, thread ids under five digits padded (as on a
    /// machine that has not started 10,000 processes yet) and a call another thread interrupted.
    @Test func spoolCallsReadsPaddedThreadIDs() throws {
        let log = """
            812   openat(AT_FDCWD, "/tmp/s/formgate-spool-a1B2c3", O_RDWR|O_CREAT|O_EXCL, 0600 <unfinished ...>
            9031  write(1, "x", 1)                  = 1
            812   <... openat resumed>)             = 7
            9031  write(7, "\\0\\0"..., 65536) = 65536
            12345 write(7, "\\0\\0"..., 65536) = 65536
            9031  write(7, "\\0\\0"..., 65536) = 65536
            812   close(7)                          = 0
            9031  write(7, "\\0"..., 1)             = 1

            """
        let calls = try Self.spoolCalls(log)
        #expect(calls.opener == 812)
        #expect(calls.writes == [9031: 2, 12345: 1])
    }

    /// The thread ids of process `pid`.
    static func threadIDs(_ pid: Int32) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).compactMap {
            Int32($0)
        }
    }

    static func threadName(_ pid: Int32, _ thread: Int32) -> String {
        ((try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/comm", encoding: .utf8)) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// From an `strace -f` log: the thread that created the first spool file, and how many
    /// write(2)s each thread made to its descriptor until it was closed. (A call another
    /// thread interrupts is logged `<unfinished ...>`, its result on a `resumed>` line.)
    static func spoolCalls(_ log: String) throws -> (opener: Int32, writes: [Int32: Int]) {
        var opener: Int32?
        var descriptor: Substring?
        var writes: [Int32: Int] = [:]
        for line in log.split(separator: "\n") {
            // strace pads the thread id to five columns ("%-5u "): "1234  openat(...".
            let fields = line.split(separator: " ", maxSplits: 1)
            guard fields.count == 2, let thread = Int32(fields[0]) else { continue }
            let call = fields[1].drop { $0 == " " }
            if let descriptor {
                if call.hasPrefix("write(\(descriptor),") { writes[thread, default: 0] += 1 }
                if call.hasPrefix("close(\(descriptor))") { break }
            } else if call.hasPrefix("openat("), call.contains("formgate-spool-") {
                opener = thread
            }
            if descriptor == nil, thread == opener, !call.hasSuffix("<unfinished ...>"),
                let result = call.split(separator: "= ").last, Int(result) != nil
            {
                descriptor = result
            }
        }
        guard let opener, descriptor != nil else { throw TestFailure("no spool file was opened") }
        return (opener, writes)
    }
}
