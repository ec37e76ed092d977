// swift-tools-version: 6.0
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "FormGate",
    products: [
        .library(name: "HTTPCore", targets: ["HTTPCore"]),
        .library(name: "MultipartParsing", targets: ["MultipartParsing"]),
        .library(name: "MultipartEncoding", targets: ["MultipartEncoding"]),
        .library(name: "HTTP1", targets: ["HTTP1"]),
        .library(name: "ClientAuth", targets: ["ClientAuth"]),
        .library(name: "HTTP2", targets: ["HTTP2"]),
        // The proxy's state machines (for the HTTP/2 fuzz target, which drives an exchange per stream).
        .library(name: "ProxyCore", targets: ["ProxyCore"]),
        // tus requests, metadata and records (for the tus fuzz target).
        .library(name: "Resumable", targets: ["Resumable"]),
        // Metadata-strip transforms and the clamd codec (for the strip fuzz target).
        .library(name: "Inspection", targets: ["Inspection"]),
        // The Redis protocol (RESP2) codec.
        .library(name: "SharedState", targets: ["SharedState"]),
        // W3C trace context: ids, traceparent, sampling (for the traceparent fuzz target).
        .library(name: "TraceContext", targets: ["TraceContext"]),
        .executable(name: "formgate", targets: ["formgate"]),
        .executable(name: "multipart-bench", targets: ["MultipartBench"]),
        .executable(name: "jwt-bench", targets: ["JWTBench"]),
    ],
    targets: [
        .target(name: "HTTPCore", swiftSettings: strict),
        .target(name: "CByteSearch"),
        .target(name: "CEventSupport", dependencies: ["CLibevent"]),
        .systemLibrary(
            name: "CLibevent", pkgConfig: "libevent_openssl",
            providers: [.apt(["libevent-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CMagic", providers: [.apt(["libmagic-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CYAML", pkgConfig: "yaml-0.1", providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(
            name: "CNghttp2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        .target(name: "MultipartParsing", dependencies: ["HTTPCore", "CByteSearch"], swiftSettings: strict),
        .target(name: "MultipartEncoding", dependencies: ["HTTPCore"], swiftSettings: strict),
        .target(name: "HTTP1", dependencies: ["HTTPCore"], swiftSettings: strict),
        .target(name: "HTTP2", dependencies: ["HTTPCore", "CNghttp2"], swiftSettings: strict),
        .target(
            name: "Resumable", dependencies: ["HTTPCore", "HTTP1", "CCrypto", "MultipartEncoding"],
            swiftSettings: strict),
        .target(name: "Inspection", dependencies: ["HTTPCore", "CZlib"], swiftSettings: strict),
        .target(name: "SharedState", dependencies: ["HTTPCore"], swiftSettings: strict),
        .target(
            name: "ObjectStore",
            dependencies: ["HTTPCore", "CCrypto", "Resumable", "SharedState", "UploadRules"],
            swiftSettings: strict),
        .target(name: "ClientAuth", dependencies: ["HTTPCore", "HTTP1", "CCrypto"], swiftSettings: strict),
        .target(
            name: "UploadRules",
            dependencies: [
                "HTTPCore", "MultipartParsing", "MultipartEncoding", "CCrypto", "CZlib", "CMagic",
                "Inspection",
            ],
            swiftSettings: strict),
        .target(
            name: "EventLoop", dependencies: ["CLibevent", "CCrypto", "CEventSupport"], swiftSettings: strict),
        .target(
            name: "ProxyCore",
            dependencies: [
                "HTTPCore", "HTTP1", "MultipartParsing", "MultipartEncoding", "UploadRules", "ClientAuth",
                "CCrypto", "Resumable", "SharedState", "TraceContext",
            ],
            swiftSettings: strict),
        .target(
            name: "Config",
            dependencies: [
                "CYAML", "ProxyCore", "UploadRules", "HTTPCore", "ClientAuth", "Resumable", "Inspection",
                "SharedState", "Tracing",
            ],
            swiftSettings: strict),
        .target(name: "HTTPIO", dependencies: ["EventLoop", "HTTP1", "HTTPCore"], swiftSettings: strict),
        // Spans, W3C traceparent, sampling, OTLP/HTTP JSON and the batching exporter.
        // W3C trace context: ids, traceparent, sampling (pure: the exchange decides with it).
        .target(name: "TraceContext", dependencies: ["HTTPCore"], swiftSettings: strict),
        .target(
            name: "Tracing", dependencies: ["HTTPCore", "HTTP1", "EventLoop", "TraceContext"],
            swiftSettings: strict),
        .target(
            name: "Proxy",
            dependencies: [
                "Config", "ProxyCore", "HTTPIO", "EventLoop", "HTTP1", "HTTPCore", "MultipartParsing",
                "MultipartEncoding", "CLibevent", "UploadRules", "CCrypto", "HTTP2", "Resumable",
                "Inspection", "ObjectStore", "SharedState", "Tracing",
            ],
            swiftSettings: strict),
        .target(
            name: "DemoUpstream",
            dependencies: ["HTTPIO", "EventLoop", "HTTP1", "HTTPCore", "MultipartParsing", "CCrypto"],
            swiftSettings: strict),
        .executableTarget(
            name: "formgate",
            dependencies: [
                "Proxy", "Config", "ProxyCore", "DemoUpstream", "EventLoop", "UploadRules", "Resumable",
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "MultipartBench",
            dependencies: [
                "HTTPCore", "MultipartParsing", "MultipartEncoding", "CByteSearch", "CCrypto", "EventLoop",
                "UploadRules",
            ],
            swiftSettings: strict
        ),
        .executableTarget(name: "JWTBench", dependencies: ["ClientAuth", "CCrypto"], swiftSettings: strict),
        .testTarget(
            name: "ClientAuthTests", dependencies: ["ClientAuth", "HTTPCore", "HTTP1", "CCrypto"],
            exclude: ["Resources"],
            swiftSettings: strict),
        .testTarget(
            name: "InspectionTests", dependencies: ["Inspection", "HTTPCore"], swiftSettings: strict),
        .testTarget(
            name: "TracingTests", dependencies: ["Tracing", "TraceContext", "HTTPCore"],
            exclude: ["Resources"],
            swiftSettings: strict),
        .testTarget(
            name: "SharedStateTests", dependencies: ["SharedState", "HTTPCore"], swiftSettings: strict),
        .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore"], swiftSettings: strict),
        .testTarget(
            name: "ObjectStoreTests",
            dependencies: ["ObjectStore", "Resumable", "SharedState", "HTTPCore", "UploadRules"],
            swiftSettings: strict),
        .testTarget(
            name: "ResumableTests",
            dependencies: ["Resumable", "HTTPCore", "HTTP1", "MultipartEncoding", "MultipartParsing"],
            swiftSettings: strict),
        .testTarget(
            name: "EventLoopTests", dependencies: ["EventLoop", "CCrypto", "CLibevent"], swiftSettings: strict
        ),
        .testTarget(
            name: "ProxyIntegrationTests", dependencies: ["CCrypto"], exclude: ["Resources"],
            swiftSettings: strict),
        .testTarget(
            name: "UploadRulesTests",
            dependencies: ["UploadRules", "HTTPCore", "MultipartParsing", "MultipartEncoding"],
            exclude: ["Resources"],
            swiftSettings: strict),
        .testTarget(
            name: "ConfigTests",
            dependencies: [
                "Config", "ProxyCore", "UploadRules", "HTTPCore", "Resumable", "SharedState", "Tracing",
                "TraceContext",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "ProxyCoreTests",
            dependencies: [
                "ProxyCore", "HTTPCore", "HTTP1", "MultipartParsing", "UploadRules", "ClientAuth", "CCrypto",
                "SharedState",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "ProxyTests",
            dependencies: [
                "Proxy", "ProxyCore", "EventLoop", "HTTP1", "HTTPCore", "MultipartParsing",
                "MultipartEncoding",
            ],
            exclude: ["Resources"], swiftSettings: strict),
        .testTarget(name: "HTTP1Tests", dependencies: ["HTTPCore", "HTTP1"], swiftSettings: strict),
        .testTarget(
            name: "HTTP2Tests", dependencies: ["HTTP2", "HTTPCore", "CNghttp2"], exclude: ["Resources"],
            swiftSettings: strict),
        .testTarget(
            name: "MultipartParsingTests",
            dependencies: ["HTTPCore", "MultipartParsing", "MultipartEncoding"],
            swiftSettings: strict
        ),
        .testTarget(
            name: "MultipartEncodingTests",
            dependencies: ["HTTPCore", "MultipartParsing", "MultipartEncoding"],
            swiftSettings: strict
        ),
    ],
    swiftLanguageModes: [.v6]
)
