import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `Resources/auth_service.py` run by the Python of `FORMGATE_PYTHON` (else Debian's
/// `/usr/bin/python3`; a missing Python fails the test), killed when released.
final class AuthServiceProcess {
    let process = Process()
    let port: Int
    /// Where the service records every request it sees (one JSON object per line).
    let logPath: String

    init() throws {
        let python = ProcessInfo.processInfo.environment["FORMGATE_PYTHON"] ?? "/usr/bin/python3"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw AuthTestFailure("\(python) is not installed (make test installs python3)")
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Resources/auth_service.py").path
        logPath = NSTemporaryDirectory() + "formgate-auth-\(UUID().uuidString).jsonl"
        guard FileManager.default.createFile(atPath: logPath, contents: nil) else {
            throw AuthTestFailure("cannot create \(logPath)")
        }
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [script, logPath]
        process.standardOutput = output
        try process.run()
        // The first line is "listening on 127.0.0.1:PORT" (read before any loop runs).
        var text = ""
        while !text.contains("\n") {
            let data = output.fileHandleForReading.availableData
            guard !data.isEmpty else { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("listening on "),
            let port = Int(line.split(separator: ":").last ?? "")
        else {
            kill(process.processIdentifier, SIGKILL)
            throw AuthTestFailure("the auth service did not start: \(text)")
        }
        self.port = port
    }

    deinit {
        // SIGKILL: the test process may block SIGTERM, and its children inherit the mask.
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// The requests the service saw, in order.
    var requests: [SeenRequest] {
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                let method = object["method"] as? String, let path = object["path"] as? String,
                let headers = object["headers"] as? [[String]], let bodyBytes = object["body_bytes"] as? Int
            else { return nil }
            return SeenRequest(
                method: method, path: path, headers: headers.map { ($0[0], $0[1]) }, bodyBytes: bodyBytes)
        }
    }
}

/// A request as the auth service saw it.
struct SeenRequest {
    let method: String
    let path: String
    let headers: [(name: String, value: String)]
    let bodyBytes: Int

    /// The values of every field named `name` (any case), in order.
    func values(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }
}

struct AuthTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
