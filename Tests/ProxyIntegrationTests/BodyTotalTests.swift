import Foundation
import Testing

/// `timeouts.body_total` (issue 32): a body that trickles one byte every 100 ms, never silent
/// long enough for `timeouts.idle`, is cut at 2 s in total with a 408, on HTTP/1.1, on an
/// HTTP/2 stream and on a tus PATCH; the upstream sees its request aborted (never whole), and
/// the access log and `formgate_limit_rejections_total{limit="body_total"}` say why.
@Suite(.serialized) struct BodyTotalTests {
    /// 10 s of trickle at 10 bytes a second.
    static let length = 100

    /// The upstream of the proxied cases: it answers only a whole request.
    static func recorder() throws -> FakeUpstream {
        try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
    }

    /// Sends `head`, then one byte of the body every 100 ms until the client has an answer (or
    /// the whole body went); returns the answer and the seconds from the head to it.
    static func trickle(_ client: RawClient, head: String, length: Int) throws -> (
        status: Int, seconds: Double
    ) {
        let started = Date()
        client.send(head)
        let answered = Counter()
        let sender = Thread {
            for _ in 0..<length where answered.value == 0 {
                client.send("x")
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        sender.start()
        let response = try #require(client.readResponse(timeout: 30), "no answer")
        answered.add(1)
        return (response.status, Date().timeIntervalSince(started))
    }

    /// The log line and the metric name the cut.
    static func expectLoggedAndCounted(_ proxy: ServerProcess, status: Int = 408) throws {
        let line = try #require(proxy.accessLog(atLeast: 1).first { $0["status"] as? Int == status })
        let error = line["error"] as? String ?? ""
        #expect(error.contains("timeouts.body_total"), "\(line)")
        #expect(try proxy.metric("formgate_limit_rejections_total{limit=\"body_total\"}") == 1)
    }

    /// The upstream got part of the request, never all of it, and its connection was closed.
    static func expectAborted(_ upstream: FakeUpstream, headAndBody: Int) {
        #expect(eventually { upstream.connectionRecords.contains { $0.closed } }, "upstream never aborted")
        let records = upstream.connectionRecords
        #expect(records.count == 1)
        let received = records.first?.bytes.count ?? 0
        #expect(received > 0 && received < headAndBody, "upstream received \(received) of \(headAndBody)")
    }

    @Test func http1BodyPastTheTotalIs408AndTheUpstreamIsAborted() throws {
        let upstream = try Self.recorder()
        defer { upstream.stop() }
        let proxy = try startProxy(
            "admin: 127.0.0.1:0\nupstream: \(upstream.url)\ntimeouts: { body_total: 2s, idle: 5s }\n",
            workers: 1)
        defer { proxy.stop() }
        let client = try RawClient(port: proxy.port)
        let head =
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: application/octet-stream\r\n"
            + "Content-Length: \(Self.length)\r\n\r\n"
        let answer = try Self.trickle(client, head: head, length: Self.length)
        #expect(answer.status == 408)
        #expect(answer.seconds >= 1.9 && answer.seconds < 8, "answered after \(answer.seconds) s")
        Self.expectAborted(upstream, headAndBody: 200 + Self.length)
        try Self.expectLoggedAndCounted(proxy)
    }

    @Test func aBodyWithinTheTotalIsUntouched() throws {
        let upstream = try Self.recorder()
        defer { upstream.stop() }
        let proxy = try startProxy(
            "admin: 127.0.0.1:0\nupstream: \(upstream.url)\ntimeouts: { body_total: 2s }\n", workers: 1)
        defer { proxy.stop() }
        let client = try RawClient(port: proxy.port)
        // Ten bytes in about a second, then the answer; the connection stays for a second
        // request past the first's 2 s (the timer ended with the first body).
        let head =
            "POST /upload HTTP/1.1\r\nHost: t\r\nContent-Type: application/octet-stream\r\nContent-Length: 10\r\n\r\n"
        #expect(try Self.trickle(client, head: head, length: 10).status == 200)
        #expect(try Self.trickle(client, head: head, length: 10).status == 200)
        #expect(try proxy.metric("formgate_limit_rejections_total{limit=\"body_total\"}") == nil)
    }

    @Test func http2StreamPastTheTotalIs408() throws {
        let upstream = try Self.recorder()
        defer { upstream.stop() }
        let proxy = try startListeners(
            ["{ address: 127.0.0.1:0, http2: { h2c: true } }"],
            "admin: 127.0.0.1:0\nupstream: \(upstream.url)\ntimeouts: { body_total: 2s, idle: 5s }\n",
            workers: 1)
        defer { proxy.stop() }
        let script = UpstreamServerTests.resources.appendingPathComponent("h2_trickle.py").path
        let result = try run(
            try python3(), [script, "127.0.0.1", String(proxy.port), "/upload", String(Self.length)])
        let answer = try jsonObject(result.output)
        #expect(answer["status"] as? Int == 408, "\(answer)")
        let seconds = answer["seconds"] as? Double ?? 0
        #expect(seconds >= 1.9 && seconds < 8, "\(answer)")
        Self.expectAborted(upstream, headAndBody: 200 + Self.length)
        try Self.expectLoggedAndCounted(proxy)
    }

    @Test func tusPatchPastTheTotalIs408AndKeepsWhatArrived() throws {
        let rig = try TusRig(extra: "timeouts: { body_total: 2s, idle: 5s }\nadmin: 127.0.0.1:0")
        let id = try rig.client.createID(length: Int64(Self.length))
        let client = try rig.client.openPatch(id, offset: 0, contentLength: Int64(Self.length))
        let started = Date()
        let answered = Counter()
        let sender = Thread {
            for _ in 0..<Self.length where answered.value == 0 {
                client.send("x")
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        sender.start()
        let response = try #require(client.readResponse(timeout: 30))
        answered.add(1)
        let seconds = Date().timeIntervalSince(started)
        #expect(response.status == 408)
        #expect(seconds >= 1.9 && seconds < 8, "answered after \(seconds) s")
        // What arrived before the cut is kept: the next PATCH resumes from it.
        let offset = Int(try rig.client.headOf(id).header("Upload-Offset") ?? "") ?? -1
        #expect(offset > 0 && offset < Self.length, "offset \(offset)")
        rig.expectNothingDelivered("a cut PATCH")
        try Self.expectLoggedAndCounted(rig.proxy)
    }
}
