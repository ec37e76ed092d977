import Config
import Foundation
import Testing

/// `listen: - { address, tls?, http2: { enabled, h2c, max_concurrent_streams, stream_window,
/// connection_window } }`: which listeners serve HTTP/2, with what settings, and the errors.
@Suite struct HTTP2ListenerConfigTests {
    func load(_ listener: String) -> Result<ServerConfig, ConfigErrors> {
        ConfigLoader.load(text: "listen:\n  - \(listener)\n", file: "h.yaml")
    }

    @Test func tlsServesH2ByDefaultAndPlainOnlyWithH2c() throws {
        let files = try ListenerConfigTests.files()
        defer { try? FileManager.default.removeItem(atPath: files.directory) }
        let tls = "tls: { certificates: [{ cert: \(files.cert), key: \(files.key) }] }"
        #expect(try load("{ address: 127.0.0.1:8443, \(tls) }").get().listeners.first?.servesHTTP2 == true)
        #expect(
            try load("{ address: 127.0.0.1:8443, \(tls), http2: { enabled: false } }").get().listeners.first?
                .servesHTTP2 == false)
        #expect(try load("127.0.0.1:8080").get().listeners.first?.servesHTTP2 == false)
        let h2c = try #require(
            try load(
                "{ address: 127.0.0.1:8080, http2: { h2c: true, max_concurrent_streams: 64, stream_window: 4MiB, connection_window: 32MiB } }"
            ).get().listeners.first)
        #expect(h2c.servesHTTP2)
        #expect(h2c.http2.maxConcurrentStreams == 64)
        #expect(h2c.http2.streamWindow == 4 << 20)
        #expect(h2c.http2.connectionWindow == 32 << 20)
    }

    @Test(arguments: [
        ("{ address: 127.0.0.1:8080, http2: { h2c: maybe } }", "listen[0].http2.h2c"),
        ("{ address: 127.0.0.1:8080, http2: { max_concurrent_streams: 0 } }", "expected 1 to 1000"),
        ("{ address: 127.0.0.1:8080, http2: { stream_window: 1KiB } }", "listen[0].http2.stream_window"),
        ("{ address: 127.0.0.1:8080, http2: { stream_window: 4GiB } }", "listen[0].http2.stream_window"),
        (
            "{ address: 127.0.0.1:8080, http2: { stream_window: 8MiB, connection_window: 4MiB } }",
            "must be at least stream_window"
        ),
        ("{ address: 127.0.0.1:8080, http2: { push: true } }", "listen[0].http2.push: unknown key"),
    ])
    func badSettingsAreRefusedWithTheirKey(listener: String, expected: String) {
        guard case .failure(let errors) = load(listener) else {
            Issue.record("loaded \(listener)")
            return
        }
        #expect(errors.description.contains(expected), "\(errors)")
    }
}
