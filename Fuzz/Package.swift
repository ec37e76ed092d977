// swift-tools-version: 6.0
// Fuzz targets for FormGate's parsers (libFuzzer). Built only by `make fuzz` / `make test`:
//   swift build -c release --package-path Fuzz -Xswiftc -sanitize=fuzzer,address (see scripts/fuzz.sh)
import PackageDescription

let package = Package(
    name: "FormGateFuzz",
    dependencies: [.package(name: "FormGate", path: "..")],
    targets: [
        .executableTarget(
            name: "FuzzMultipart",
            dependencies: [
                .product(name: "HTTPCore", package: "FormGate"),
                .product(name: "MultipartParsing", package: "FormGate"),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzHeaderValues", dependencies: [.product(name: "HTTPCore", package: "FormGate")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzHTTPHead", dependencies: [.product(name: "HTTP1", package: "FormGate")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzJWT", dependencies: [.product(name: "ClientAuth", package: "FormGate")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzChunked", dependencies: [.product(name: "HTTP1", package: "FormGate")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzH2",
            dependencies: [
                .product(name: "HTTP2", package: "FormGate"), .product(name: "HTTPCore", package: "FormGate"),
                .product(name: "HTTP1", package: "FormGate"),
                .product(name: "ProxyCore", package: "FormGate"),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzTus",
            dependencies: [
                .product(name: "Resumable", package: "FormGate"),
                .product(name: "HTTPCore", package: "FormGate"),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzRESP", dependencies: [.product(name: "SharedState", package: "FormGate")],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzStrip",
            dependencies: [
                .product(name: "Inspection", package: "FormGate"),
                .product(name: "HTTPCore", package: "FormGate"),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
        .executableTarget(
            name: "FuzzTraceParent",
            dependencies: [
                .product(name: "TraceContext", package: "FormGate"),
                .product(name: "HTTPCore", package: "FormGate"),
            ],
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    ],
    swiftLanguageModes: [.v6]
)
