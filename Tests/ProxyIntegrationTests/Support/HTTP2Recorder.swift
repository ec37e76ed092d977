import Foundation
import Testing

/// How a client reaches the proxy's HTTP/2: h2c with prior knowledge, or TLS with ALPN `h2`.
enum H2Transport: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case h2c, tls

    var testDescription: String { rawValue }
}

/// A proxy with an h2c listener and a TLS one (ALPN `h2`, a certificate for `a.test`) in front
/// of a raw recording upstream that never answers (`FakeUpstream(.silent)`, unless told
/// another behavior), and `Resources/h2_frames.py` to send it exact frames.
struct HTTP2RecorderSetup {
    let certificates: TLSCertificates
    let recorder: FakeUpstream
    let proxy: ServerProcess

    /// `yaml` is the configuration after `upstream:` (routes, timeouts); `listeners` are more
    /// `listen:` entries, after the h2c and the TLS one.
    init(_ yaml: String, upstream: FakeUpstream.Behavior = .silent, listeners: [String] = []) throws {
        certificates = try TLSCertificates()
        let leaf = try certificates.leaf("a.test")
        recorder = try FakeUpstream(upstream)
        proxy = try startListeners(
            ["{ address: 127.0.0.1:0, http2: { h2c: true } }", tlsListener([leaf])] + listeners,
            "upstream: \(recorder.url)\n" + yaml, workers: 1)
    }

    func port(_ transport: H2Transport) -> Int {
        proxy.listeners.first { $0.tls == (transport == .tls) }?.port ?? 0
    }

    /// Writes `bytes` to a file of the setup's directory; returns its path.
    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = certificates.directory + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Starts `h2_frames.py` over `transport` with `arguments` (its options and steps).
    func client(_ transport: H2Transport, _ arguments: [String]) throws -> H2FramesClient {
        let script = UpstreamServerTests.resources.appendingPathComponent("h2_frames.py").path
        let tls = transport == .tls ? ["--tls", "--cafile", certificates.ca, "--sni", "a.test"] : []
        return H2FramesClient(
            process: try ServerProcess(
                try python3(), [script, "127.0.0.1", String(port(transport))] + tls + arguments,
                waitForListening: false))
    }

    /// The first whole request the recorder holds after byte `offset`, once it is there; `nil`
    /// when `client`'s stream ended first (the proxy answered instead) or 20 s passed.
    func wholeRequest(after offset: Int, unless client: H2FramesClient) -> RecordedRequest? {
        var request: RecordedRequest?
        eventually(within: 20) {
            let bytes = recorder.bytesReceived
            request = bytes.count > offset ? RecordedRequest(bytes[offset...]) : nil
            return request != nil || client.ended() != nil
        }
        return request
    }

    /// Whether no connection the recorder accepted holds a request an upstream could act on.
    var recorderHoldsNoWholeRequest: Bool {
        recorder.streams.allSatisfy {
            $0.isEmpty || (RecordedRequest($0[...]) == nil && !ForwardedRequest($0).isComplete)
        }
    }

    func stop() {
        proxy.stop()
        recorder.stop()
        certificates.remove()
    }
}

/// One run of `Resources/h2_frames.py`: its JSON events as they arrive; stopped (SIGTERM) when
/// released or by `stop()`, which closes its connection.
struct H2FramesClient {
    let process: ServerProcess

    var events: [[String: Any]] {
        process.stdout.split(separator: "\n").compactMap { try? jsonObject(Data($0.utf8)) }
    }

    /// The `ended` event of `stream` (its response ended or it was reset), if it came.
    func ended(_ stream: Int = 1) -> [String: Any]? {
        events.first { $0["event"] as? String == "ended" && $0["stream"] as? Int == stream }
    }

    /// What the client saw, for failure messages: its events (or its error output).
    var record: String {
        let text = process.stdout.isEmpty ? process.stderr : process.stdout
        return String(text.suffix(2000))
    }

    func stop() {
        process.stop()
    }
}
