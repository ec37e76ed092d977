import Foundation

#if canImport(Glibc)
    import Glibc
#endif

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The SDK venv's python (`FORMGATE_SDK_PYTHON`, `make sdk-venv`), which has opentelemetry-proto.
/// A test that needs it fails, never skips, when it is missing.
func sdkPython() throws -> String {
    guard let path = ProcessInfo.processInfo.environment["FORMGATE_SDK_PYTHON"],
        FileManager.default.isExecutableFile(atPath: path)
    else {
        throw TestFailure("FORMGATE_SDK_PYTHON is not set or not executable (make sdk-venv makes it)")
    }
    return path
}

/// A file in `Tests/TracingTests/Resources`.
func resourcePath(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Resources").appendingPathComponent(name).path
}

/// Waits until `condition` holds, polling every 10 ms, at most `seconds` (a generous
/// deadline: the condition is the event, the deadline only ends a test that would hang).
@discardableResult
func eventually(within seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        if Date() > deadline { return false }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return true
}

/// A loopback port nothing listens on: bound, read and closed (a connection to it is refused).
func closedPort() throws -> Int {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { Glibc.close(socket) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
        }
    }
    guard bound else { throw TestFailure("bind: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Runs `Resources/otlp_receiver.py decode` on `body`: what opentelemetry-proto read from it.
func decodeWithOpenTelemetry(_ body: [UInt8]) throws -> (errors: [String], request: [String: Any]?) {
    let directory = NSTemporaryDirectory() + "formgate-otlp-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let input = directory + "/request.json"
    let output = directory + "/decoded.json"
    try Data(body).write(to: URL(fileURLWithPath: input))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try sdkPython())
    process.arguments = [resourcePath("otlp_receiver.py"), "decode", input, output]
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw TestFailure("otlp_receiver.py decode exited with \(process.terminationStatus)")
    }
    let decoded = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output)))
    guard let result = decoded as? [String: Any] else { throw TestFailure("decode wrote no object") }
    return (result["errors"] as? [String] ?? ["no errors list"], result["request"] as? [String: Any])
}
