import Foundation
import Testing

/// `tracing:` end to end (issue 32): FormGate exports each request's SERVER span and its
/// upstream attempt's CLIENT span to a loopback OTLP/HTTP receiver written for the tests
/// (`Tests/TracingTests/Resources/otlp_receiver.py`, parsing with opentelemetry-proto from
/// the SDK venv); a client's `traceparent` is followed, the upstream receives one naming
/// FormGate's CLIENT span; `sample: 0` exports nothing; a receiver that is down loses spans
/// (counted) and nothing else.
@Suite(.serialized) struct ProxyTracingTests {
    static let receiverScript = packageRoot.appendingPathComponent(
        "Tests/TracingTests/Resources/otlp_receiver.py"
    )
    .path

    /// The receiver, answering 200 (or `options`).
    static func receiver(_ options: [String] = []) throws -> ServerProcess {
        try ServerProcess(try sdkPython(), [receiverScript, "serve"] + options)
    }

    /// Every span the receiver parsed, as its `detail` describes them, and its errors.
    static func received(_ receiver: ServerProcess) -> (spans: [[String: Any]], errors: [String]) {
        var spans: [[String: Any]] = []
        var errors: [String] = []
        for record in receiver.accessLog where record["event"] as? String == "answered" {
            errors += record["errors"] as? [String] ?? []
            let detail = record["detail"] as? [String: Any] ?? [:]
            for resource in detail["resources"] as? [[String: Any]] ?? [] {
                for scope in resource["scopes"] as? [[String: Any]] ?? [] {
                    spans += scope["spans"] as? [[String: Any]] ?? []
                }
            }
        }
        return (spans, errors)
    }

    static func attribute(_ span: [String: Any], _ key: String) -> String? {
        for entry in span["attributes"] as? [[Any]] ?? [] where entry.first as? String == key {
            return entry.count > 2 ? "\(entry[2])" : nil
        }
        return nil
    }

    static func post(_ port: Int, path: String = "/upload", headers: String = "", body: [UInt8]) throws -> Int
    {
        let client = try RawClient(port: port)
        client.send(
            "POST \(path) HTTP/1.1\r\nHost: t\r\n\(headers)Content-Type: multipart/form-data; boundary=b\r\nContent-Length: \(body.count)\r\n\r\n"
        )
        client.send(body)
        return try #require(client.readResponse()).status
    }

    static let body = LiveRig.multipart(4096, filename: "a.bin")

    @Test func serverAndClientSpansFollowTheClientsTraceAndTheUpstreamGetsFormGatesSpan() throws {
        let receiver = try Self.receiver()
        defer { receiver.stop() }
        let upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        defer { upstream.stop() }
        let proxy = try startProxy(
            """
            admin: 127.0.0.1:0
            upstream: \(upstream.url)
            tracing: { otlp: "\(receiver.url)", sample: 1, service_name: formgate-test }
            routes:
              - name: photos
                match: { path: /upload }
                multipart: { rename_fields: { upload: file } }

            """, workers: 1)
        let traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
        let parentID = "00f067aa0ba902b7"
        #expect(
            try Self.post(
                proxy.port, headers: "traceparent: 00-\(traceID)-\(parentID)-01\r\n", body: Self.body)
                == 200)
        #expect(try Self.post(proxy.port, body: Self.body) == 200)
        // SIGTERM: the drain exports what is queued before the process exits.
        proxy.stop()
        let (spans, errors) = Self.received(receiver)
        #expect(errors.isEmpty, "\(errors)")
        #expect(spans.count == 4, "\(spans)")
        let servers = spans.filter { $0["kind"] as? Int == 2 }
        let clients = spans.filter { $0["kind"] as? Int == 3 }
        #expect(servers.count == 2 && clients.count == 2)
        // The followed trace: the client's trace id, its span as the SERVER span's parent.
        let followed = try #require(servers.first { $0["traceId"] as? String == traceID })
        #expect(followed["parentSpanId"] as? String == parentID)
        #expect(followed["name"] as? String == "POST photos")
        #expect(Self.attribute(followed, "http.request.method") == "POST")
        #expect(Self.attribute(followed, "http.response.status_code") == "200")
        #expect(Self.attribute(followed, "formgate.route") == "photos")
        #expect(Self.attribute(followed, "formgate.parts") == "1")
        #expect(Self.attribute(followed, "formgate.bytes_in") == String(Self.body.count))
        let events = (followed["events"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(
            events == [
                "request.first_byte", "request.last_byte", "response.first_byte", "response.last_byte",
            ],
            "\(events)")
        let client = try #require(clients.first { $0["traceId"] as? String == traceID })
        #expect(client["parentSpanId"] as? String == followed["spanId"] as? String)
        #expect(Self.attribute(client, "server.port") == String(upstream.port))
        // Ids are hex (the receiver refuses anything else) and times nanoseconds in order.
        let start = UInt64(followed["start"] as? String ?? "") ?? 0
        let end = UInt64(followed["end"] as? String ?? "") ?? 0
        #expect(start > 1_700_000_000_000_000_000 && end >= start, "\(start) \(end)")
        // The new trace: no parent, its own id.
        let fresh = try #require(servers.first { $0["traceId"] as? String != traceID })
        #expect(fresh["parentSpanId"] as? String == "")
        // The upstream got a traceparent naming FormGate's CLIENT span, in the client's trace.
        let streams = upstream.streams.map { String(decoding: $0, as: UTF8.self) }.joined()
        let clientSpan = client["spanId"] as? String ?? "?"
        #expect(
            streams.contains("traceparent: 00-\(traceID)-\(clientSpan)-01\r\n"), "\(streams.prefix(2000))")
        #expect(!streams.contains(parentID), "the client's span id went upstream")
    }

    @Test func consultationsHaveTheirOwnClientSpans() throws {
        let receiver = try Self.receiver()
        defer { receiver.stop() }
        let service = try ServerProcess(
            try python3(), [UpstreamServerTests.resources.appendingPathComponent("auth_service.py").path])
        defer { service.stop() }
        let scanner = try FakeScanner(reply: Array("stream: OK\0".utf8))
        defer { scanner.stop() }
        let upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        defer { upstream.stop() }
        let proxy = try startProxy(
            """
            admin: 127.0.0.1:0
            upstream: \(upstream.url)
            tracing: { otlp: "\(receiver.url)", sample: 1 }
            scanners:
              clamd: { address: \(scanner.address), timeout: 10s }
            routes:
              - name: checked
                match: { path: /upload }
                auth: { request: { url: "http://127.0.0.1:\(service.port)/check", timeout: 2s, identity_headers: [X-User-Id] } }
                multipart: { scan: { clamd: default } }

            """, workers: 1)
        #expect(try Self.post(proxy.port, headers: "Authorization: Bearer alice\r\n", body: Self.body) == 200)
        proxy.stop()
        let (spans, errors) = Self.received(receiver)
        #expect(errors.isEmpty, "\(errors)")
        let server = try #require(spans.first { $0["kind"] as? Int == 2 }, "\(spans)")
        let names = spans.filter { $0["kind"] as? Int == 3 }.compactMap { $0["name"] as? String }.sorted()
        #expect(names == ["POST", "consult auth_service", "consult clamd"], "\(spans)")
        for span in spans where span["kind"] as? Int == 3 {
            #expect(span["parentSpanId"] as? String == server["spanId"] as? String)
            #expect(span["traceId"] as? String == server["traceId"] as? String)
        }
        let auth = try #require(spans.first { $0["name"] as? String == "consult auth_service" })
        #expect(Self.attribute(auth, "formgate.outcome") == "release")
        #expect(Self.attribute(server, "formgate.identity") == "alice")
        #expect(Self.attribute(server, "formgate.scan") == "clean")
        // No credential in any span: the bearer token is the identity here ("alice"), so the
        // header itself is what must be absent.
        #expect(!"\(spans)".contains("Bearer"))
    }

    @Test func sampleZeroExportsNothingAndForwardsTheClientsTraceparent() throws {
        let receiver = try Self.receiver()
        defer { receiver.stop() }
        let upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        defer { upstream.stop() }
        let proxy = try startProxy(
            "admin: 127.0.0.1:0\nupstream: \(upstream.url)\ntracing: { otlp: \"\(receiver.url)\", sample: 0 }\n",
            workers: 1)
        let unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"
        for _ in 0..<20 { #expect(try Self.post(proxy.port, body: Self.body) == 200) }
        #expect(try Self.post(proxy.port, headers: "traceparent: \(unsampled)\r\n", body: Self.body) == 200)
        proxy.stop()
        #expect(receiver.accessLog.isEmpty, "\(receiver.accessLog)")
        let streams = upstream.streams.map { String(decoding: $0, as: UTF8.self) }.joined()
        #expect(streams.contains("traceparent: \(unsampled)\r\n"))
    }

    @Test func aReceiverThatIsDownCostsSpansOnlyAndTheyAreCounted() throws {
        let down = try FakeUpstream(.silent)
        let port = down.port
        down.stop()
        let upstream = try FakeUpstream(.answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
        defer { upstream.stop() }
        let proxy = try startProxy(
            """
            admin: 127.0.0.1:0
            upstream: \(upstream.url)
            tracing: { otlp: "http://127.0.0.1:\(port)/v1/traces", sample: 1 }

            """, workers: 1)
        defer { proxy.stop() }
        for _ in 0..<10 { #expect(try Self.post(proxy.port, body: Self.body) == 200) }
        // The batch goes after 5 s and fails its attempts (1 s, 2 s, 4 s, 8 s apart): the
        // spans are counted dropped once the attempts run out.
        #expect(
            eventually(within: 60) {
                (try? proxy.metric("formgate_trace_spans_dropped_total")) == 20
            }, "dropped: \(String(describing: try? proxy.metric("formgate_trace_spans_dropped_total")))")
        #expect(try proxy.metric("formgate_trace_spans_exported_total") == 0)
    }
}
