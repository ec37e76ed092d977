import Config
import Testing
import TraceContext
import Tracing

/// `tracing:`: what it loads into, its defaults, and every error with its place.
@Suite struct TracingConfigTests {
    func load(_ text: String) -> Result<ServerConfig, ConfigErrors> {
        ConfigLoader.load(text: text, file: "t.yaml")
    }

    func errors(_ text: String) -> [String] {
        guard case .failure(let errors) = load(text) else { return [] }
        return errors.errors.map(\.description)
    }

    @Test func designsExampleLoads() throws {
        let config = try load(
            "tracing: { otlp: http://127.0.0.1:4318/v1/traces, service_name: formgate, sample: 0.1 }\n"
        ).get()
        let tracing = try #require(config.tracing)
        #expect(tracing.endpoint == OTLPEndpoint(host: "127.0.0.1", port: 4318, path: "/v1/traces"))
        #expect(tracing.serviceName == "formgate" && tracing.sample == 0.1)
        #expect(tracing.sampler == Sampler(ratio: 0.1))
        #expect(tracing.batchSize == 512 && tracing.batchDelayMilliseconds == 5000)
    }

    @Test func defaults() throws {
        #expect(try load("listen: 127.0.0.1:8080\n").get().tracing == nil, "no tracing unless asked")
        let tracing = try #require(
            try load("tracing:\n  otlp: http://collector.internal:4318\n").get().tracing)
        #expect(tracing.endpoint == OTLPEndpoint(host: "collector.internal", port: 4318, path: "/v1/traces"))
        #expect(tracing.serviceName == "formgate" && tracing.sample == 1)
        let environment = ["COLLECTOR": "otel:4318"]
        let expanded = try ConfigLoader.load(
            text: "tracing: { otlp: \"http://${COLLECTOR}/custom/path\", sample: 0 }\n", file: "t.yaml",
            environment: environment
        ).get().tracing
        #expect(expanded?.endpoint == OTLPEndpoint(host: "otel", port: 4318, path: "/custom/path"))
        #expect(expanded?.sample == 0)
    }

    @Test func urlsOfEveryForm() throws {
        let cases: [(String, OTLPEndpoint)] = [
            ("http://127.0.0.1:4318/v1/traces", OTLPEndpoint(host: "127.0.0.1", port: 4318)),
            ("http://collector", OTLPEndpoint(host: "collector", port: 80)),
            ("http://collector/", OTLPEndpoint(host: "collector", port: 80)),
            ("http://[::1]:4318", OTLPEndpoint(host: "::1", port: 4318)),
            ("http://[::1]/otlp/v1/traces", OTLPEndpoint(host: "::1", port: 80, path: "/otlp/v1/traces")),
        ]
        for (url, endpoint) in cases {
            #expect(try OTLPEndpoint.parse(url: url).get() == endpoint, "\(url)")
        }
        #expect(OTLPEndpoint(host: "::1", port: 4318).description == "http://[::1]:4318/v1/traces")
        for url in [
            "https://collector:4318", "grpc://collector:4317", "collector:4318", "http://", "http://:4318",
            "http://collector:0", "http://collector:70000", "http://collector:port",
            "http://user:pw@collector",
            "http://collector/v1/traces?x=1", "http://collector/v1/traces#f", "http://[::1", "http://a b",
        ] {
            if case .success(let endpoint) = OTLPEndpoint.parse(url: url) {
                Issue.record("\(url) was accepted as \(endpoint)")
            }
        }
    }

    @Test func errorsSayWhereAndWhy() {
        #expect(
            errors("tracing: { service_name: edge }\n") == [
                "t.yaml:1:10: tracing: give otlp: http://HOST:PORT/v1/traces (the collector's OTLP/HTTP URL)"
            ])
        let https = errors("tracing:\n  otlp: https://collector:4318\n")
        #expect(
            https.count == 1 && https[0].hasPrefix("t.yaml:2:9: tracing.otlp: https is not supported"),
            "\(https)")
        #expect(
            errors("tracing: { otlp: \"http://c:4318\", sample: 1.5 }\n") == [
                "t.yaml:1:43: tracing.sample: expected a number from 0 to 1 (the share of traces kept), found '1.5'"
            ])
        #expect(errors("tracing: { otlp: \"http://c:4318\", sample: lots }\n").count == 1)
        #expect(errors("tracing: { otlp: \"http://c:4318\", sample: nan }\n").count == 1)
        #expect(errors("tracing: { otlp: \"http://c:4318\", service_name: \"\" }\n").count == 1)
        let unknown = errors("tracing: { otlp: \"http://c:4318\", exporter: jaeger }\n")
        #expect(
            unknown == [
                "t.yaml:1:35: tracing.exporter: unknown key (expected one of: otlp, sample, service_name)"
            ], "\(unknown)")
        #expect(errors("tracing: http://c:4318\n").first?.contains("expected a mapping") == true)
    }
}
