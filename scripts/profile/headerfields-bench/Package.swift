// swift-tools-version: 6.0
// HeaderFields and HeadParser timed through their public API only, so the same program
// builds against any FormGate checkout: FORMGATE_ROOT=/path/to/checkout swift run -c release
// (scripts/profile/headerfields-bench.sh runs it for two commits side by side).
import PackageDescription

let root = Context.environment["FORMGATE_ROOT"] ?? "../../.."

let package = Package(
    name: "HeaderFieldsBench",
    dependencies: [.package(name: "FormGate", path: root)],
    targets: [
        .executableTarget(
            name: "HeaderFieldsBench",
            dependencies: [
                .product(name: "HTTPCore", package: "FormGate"), .product(name: "HTTP1", package: "FormGate"),
            ])
    ]
)
