import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The admin's live upload view (issue 32): `GET /uploads` and `GET /uploads/events` list the
/// uploads in flight on every worker with their stages and moving byte counts, then the
/// finished ones with their statuses; the admin token guards every admin answer, and no
/// secret ever appears in one.
@Suite(.serialized) struct LiveViewTests {
    /// The five uploads by what tells them apart, once all show in flight as expected.
    static func awaitInFlight(_ rig: LiveRig) throws -> [String: [String: Any]] {
        var found: [String: [String: Any]] = [:]
        let seen = eventually(within: 60) {
            guard let uploads = try? rig.uploads().inFlight else { return false }
            found = [:]
            for upload in uploads {
                let route = upload["route"] as? String ?? ""
                let key = route == "slow" && upload["protocol"] as? String == "h2" ? "h2" : route
                found[key] = upload
            }
            return found["slow"]?["stage"] as? String == "receiving"
                && found["scanned"]?["stage"] as? String == "held:scan"
                && found["gated"]?["stage"] as? String == "waiting_upstream"
                && found["resumable"]?["tus"] is [String: Any]
                && found["h2"]?["stage"] as? String == "receiving"
        }
        #expect(seen, "in flight: \(found)")
        return found
    }

    @Test func theSnapshotListsEveryStageAndThenTheFinished() throws {
        let rig = try LiveRig()
        defer { rig.stop() }
        try rig.start()
        let first = try Self.awaitInFlight(rig)
        let slow = try #require(first["slow"])
        #expect(slow["protocol"] as? String == "http/1.1")
        #expect(slow["client"] as? String == "127.0.0.1")
        #expect((slow["part"] as? [String: Any])?["filename"] as? String == "slow.bin")
        #expect(slow["bytes_expected"] as? Int == LiveRig.multipart(8 << 20, filename: "slow.bin").count)
        #expect((slow["started"] as? String)?.hasSuffix("Z") == true)
        let tus = try #require(first["resumable"]?["tus"] as? [String: Any])
        #expect(tus["length"] as? Int == 1 << 20)
        // The byte counts move (and the rate follows them).
        let before = [first["slow"], first["h2"], first["resumable"]].map { $0?["bytes_in"] as? Int ?? 0 }
        var after = before
        #expect(
            eventually(within: 30) {
                let now = (try? Self.awaitInFlight(rig)) ?? [:]
                after = [now["slow"], now["h2"], now["resumable"]].map { $0?["bytes_in"] as? Int ?? 0 }
                return zip(before, after).allSatisfy { $0 < $1 }
            }, "bytes in: \(before) then \(after)")

        rig.release()
        let answers = try rig.answers()
        // The final PATCH answers what the upstream answered its delivery.
        #expect(answers == ["slow": 200, "scanned": 200, "gated": 201, "tus": 200, "h2": 200], "\(answers)")
        var finished: [[String: Any]] = []
        #expect(
            eventually(within: 30) {
                finished = (try? rig.uploads().finished) ?? []
                return finished.count >= 7 && ((try? rig.uploads().inFlight.isEmpty) ?? false)
            }, "finished: \(finished)")
        // The tus creation (201) and its delivery upstream (200) show too.
        let statuses = finished.map { "\($0["route"] as? String ?? "-"):\($0["status"] as? Int ?? 0)" }
            .sorted()
        #expect(
            statuses == [
                "gated:201", "resumable:200", "resumable:200", "resumable:201", "scanned:200", "slow:200",
                "slow:200",
            ],
            "\(statuses)")
    }

    @Test func theEventStreamSendsAtMostOneUpdatePerUploadPerSecond() throws {
        let rig = try LiveRig()
        defer { rig.stop() }
        try rig.start()
        _ = try Self.awaitInFlight(rig)
        let client = try RawClient(port: rig.adminPort)
        client.send(
            "GET /uploads/events HTTP/1.1\r\nHost: admin\r\nAuthorization: Bearer \(LiveRig.token)\r\n\r\n")
        let started = Date()
        var text = ""
        // Read for 4 s of events: a snapshot, then updates.
        while Date().timeIntervalSince(started) < 4 {
            text += String(decoding: client.read(timeout: 5) { !$0.isEmpty }, as: UTF8.self)
        }
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(text.contains("Content-Type: text/event-stream\r\n"))
        #expect(text.contains("event: snapshot\ndata: {\"in_flight\":["))
        var updates: [String: Int] = [:]
        for event in text.components(separatedBy: "\n\n") where event.hasPrefix("event: upload\n") {
            let data = event.components(separatedBy: "data: ").last ?? ""
            let id = (try? jsonObject(Data(data.utf8)))?["id"] as? String ?? "?"
            updates[id, default: 0] += 1
        }
        #expect(updates.count >= 3, "updates: \(updates)")
        // 4 s at most one a second (a fifth when the window straddles one more tick).
        #expect(updates.values.allSatisfy { $0 <= 5 }, "updates: \(updates)")
        rig.release()
        text = ""
        #expect(
            eventually(within: 30) {
                text += String(decoding: client.read(timeout: 5) { !$0.isEmpty }, as: UTF8.self)
                return text.components(separatedBy: "event: finished\n").count - 1 >= 5
            }, "\(text.suffix(2000))")
    }

    @Test func everyAdminAnswerNeedsTheTokenAndNoneHoldsASecret() throws {
        let rig = try LiveRig()
        defer { rig.stop() }
        try rig.start()
        _ = try Self.awaitInFlight(rig)
        var answers: [String] = []
        for path in ["/", "/uploads", "/uploads/events", "/metrics", "/healthz", "/readyz", "/nope"] {
            let refused = try rig.admin(path, token: nil)
            #expect(refused.status == 401, "\(path) without a token")
            #expect(refused.head.contains("WWW-Authenticate: Bearer"), "\(path)")
            let wrong = try rig.admin(path, token: LiveRig.token + "x")
            #expect(wrong.status == 401, "\(path) with a wrong token")
            answers += [refused.head + refused.body, wrong.head + wrong.body]
        }
        for path in ["/", "/uploads", "/metrics", "/healthz", "/readyz"] {
            let allowed = try rig.admin(path)
            #expect(allowed.status == 200, "\(path) with the token")
            #expect(allowed.head.contains("Cache-Control: no-store"), "\(path)")
            answers.append(allowed.head + allowed.body)
        }
        // RFC 6750's query parameter opens the page in a browser.
        #expect(try rig.admin("/?access_token=\(LiveRig.token)", token: nil).status == 200)
        let page = try rig.admin("/")
        #expect(page.head.contains("Content-Security-Policy: default-src 'none'"))
        // The event stream, a few seconds of it.
        let client = try RawClient(port: rig.adminPort)
        client.send(
            "GET /uploads/events HTTP/1.1\r\nHost: admin\r\nAuthorization: Bearer \(LiveRig.token)\r\n\r\n")
        let started = Date()
        var stream = ""
        while Date().timeIntervalSince(started) < 2 {
            stream += String(decoding: client.read(timeout: 5) { !$0.isEmpty }, as: UTF8.self)
        }
        #expect(stream.contains("event: snapshot"))
        answers.append(stream)
        for answer in answers {
            for secret in LiveRig.secrets {
                #expect(!answer.contains(secret), "an admin answer holds a secret: \(answer.prefix(300))")
            }
        }
    }

    @Test func aReaderThatDoesNotReadIsDroppedNotBuffered() throws {
        let upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        defer { upstream.stop() }
        let path = NSTemporaryDirectory() + "formgate-live-drop-\(UUID().uuidString.prefix(8)).yaml"
        try "admin: 127.0.0.1:0\nupstream: \(upstream.url)\nworkers: 1\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["FORMGATE_TEST_LIVE_READER_LIMIT"] = "8192"
        let proxy = try ServerProcess(
            formgateBinary, ["run", "-c", path], environment: environment, removingAtStop: [path])
        defer { proxy.stop() }
        let adminPort = try #require(proxy.adminPort)
        // A reader with a tiny receive window that never reads.
        let reader = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(reader) }
        var small: Int32 = 1024
        setsockopt(reader, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(adminPort).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(reader, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        try #require(connected == 0)
        let request = Array("GET /uploads/events HTTP/1.1\r\nHost: admin\r\n\r\n".utf8)
        _ = request.withUnsafeBytes { send(reader, $0.baseAddress, $0.count, 0) }
        #expect(eventually { (try? proxy.metric("formgate_live_readers")) == 1 })
        // Finished uploads make events; the reader falls behind and is dropped.
        let client = try RawClient(port: proxy.port)
        let body = LiveRig.multipart(2048, filename: String(repeating: "n", count: 120) + ".bin")
        var uploads = 0
        while uploads < 20_000, (try? proxy.metric("formgate_live_readers_dropped_total")) ?? 0 == 0 {
            for _ in 0..<100 {
                client.send(
                    "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: \(body.count)\r\n\r\n"
                )
                client.send(body)
                #expect(client.readResponse()?.status == 200)
            }
            uploads += 100
        }
        #expect(try proxy.metric("formgate_live_readers_dropped_total") == 1, "after \(uploads) uploads")
        #expect(try proxy.metric("formgate_live_readers") == 0)
        // Its connection ends: what the kernel held, then the end.
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(reader, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var buffer = [UInt8](repeating: 0, count: 65536)
        var total = 0
        var ended = false
        while true {
            let count = recv(reader, &buffer, buffer.count, 0)
            if count == 0 || (count < 0 && errno == ECONNRESET) {
                ended = true
                break
            }
            if count < 0 { break }
            total += count
        }
        #expect(ended, "the dropped reader's connection stayed open after \(total) bytes")
        #expect(try LiveViewTests.adminStatus(adminPort, "/uploads") == 200)
    }

    static func adminStatus(_ port: Int, _ path: String) throws -> Int {
        let client = try RawClient(port: port)
        client.send("GET \(path) HTTP/1.1\r\nHost: admin\r\n\r\n")
        return try #require(client.readResponse()).status
    }

    @Test func openProbesAnswerWithoutTheToken() throws {
        let directory = NSTemporaryDirectory() + "formgate-probes-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "probe-token-0123456789\n".write(toFile: directory + "/t", atomically: true, encoding: .utf8)
        let upstream = try startDemoUpstream()
        defer { upstream.stop() }
        let proxy = try startProxy(
            "admin: { listen: 127.0.0.1:0, token_file: \(directory)/t, open_probes: true }\nupstream: \(upstream.url)\n"
        )
        defer { proxy.stop() }
        let port = try #require(proxy.adminPort)
        func status(_ path: String) throws -> Int {
            let client = try RawClient(port: port)
            client.send("GET \(path) HTTP/1.1\r\nHost: admin\r\n\r\n")
            return try #require(client.readResponse()).status
        }
        #expect(try status("/healthz") == 200)
        #expect(try status("/readyz") == 200)
        #expect(try status("/metrics") == 401)
        #expect(try status("/uploads") == 401)
        #expect(try status("/") == 401)
    }

    @Test func anAdminOutsideLoopbackWithoutATokenIsRefusedByCheckAndAtStart() throws {
        let path = NSTemporaryDirectory() + "formgate-admin-\(UUID().uuidString.prefix(8)).yaml"
        try "admin: 0.0.0.0:0\nupstream: http://127.0.0.1:9\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        for command in ["check", "run"] {
            let process = try ServerProcess(formgateBinary, [command, "-c", path], waitForListening: false)
            process.process.waitUntilExit()
            #expect(process.process.terminationStatus == 1, "\(command)")
            let message = "\(path):1:8: admin: the admin listener on 0.0.0.0:0 is not on loopback"
            #expect(eventually { process.stderr.contains(message) }, "\(command): \(process.stderr)")
        }
    }
}
