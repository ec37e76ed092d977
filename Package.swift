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
        .executable(name: "multipart-bench", targets: ["MultipartBench"]),
    ],
    targets: [
        .target(name: "HTTPCore", swiftSettings: strict),
        .target(name: "CByteSearch"),
        .target(name: "MultipartParsing", dependencies: ["HTTPCore", "CByteSearch"], swiftSettings: strict),
        .target(name: "MultipartEncoding", dependencies: ["HTTPCore"], swiftSettings: strict),
        .target(name: "HTTP1", dependencies: ["HTTPCore"], swiftSettings: strict),
        .executableTarget(
            name: "MultipartBench",
            dependencies: ["HTTPCore", "MultipartParsing", "MultipartEncoding", "CByteSearch"],
            swiftSettings: strict
        ),
        .testTarget(name: "HTTPCoreTests", dependencies: ["HTTPCore"], swiftSettings: strict),
        .testTarget(name: "HTTP1Tests", dependencies: ["HTTPCore", "HTTP1"], swiftSettings: strict),
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
