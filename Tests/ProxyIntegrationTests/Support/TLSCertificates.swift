import Foundation
import Testing

/// A CA and leaf certificates made by `openssl` at test time in a fresh directory: each leaf
/// covers `NAME` and `*.NAME` (subjectAltName) with subject CN=NAME, signed by the CA.
struct TLSCertificates {
    let directory: String
    let ca: String
    private let caKey: String

    init() throws {
        directory = NSTemporaryDirectory() + "formgate-tls-listener-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        ca = directory + "/ca.pem"
        caKey = directory + "/ca.key"
        try Self.openssl([
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
            caKey,
            "-out", ca, "-days", "2", "-subj", "/CN=FormGate Test CA",
        ])
    }

    /// Makes a leaf for `name` (files `FILE.pem` and `FILE.key`, `FILE` defaulting to `name`)
    /// with serial number `serial`; returns the certificate and key paths.
    @discardableResult
    func leaf(_ name: String, file: String? = nil, serial: Int = 1) throws -> (cert: String, key: String) {
        let base = directory + "/" + (file ?? name)
        let extensions = base + ".ext"
        try "subjectAltName=DNS:\(name),DNS:*.\(name)\n".write(
            toFile: extensions, atomically: true, encoding: .utf8)
        try Self.openssl([
            "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
            base + ".key",
            "-out", base + ".csr", "-subj", "/CN=\(name)",
        ])
        try Self.openssl([
            "x509", "-req", "-in", base + ".csr", "-CA", ca, "-CAkey", caKey, "-set_serial", String(serial),
            "-out", base + ".pem", "-days", "2", "-extfile", extensions,
        ])
        return (base + ".pem", base + ".key")
    }

    /// The base64 SHA-256 of a certificate's public key (Chromium's
    /// `--ignore-certificate-errors-spki-list`).
    func spkiHash(_ certificate: String) throws -> String {
        let pipeline =
            "openssl x509 -in '\(certificate)' -pubkey -noout | openssl pkey -pubin -outform der"
            + " | openssl dgst -sha256 -binary | base64"
        let result = try run("/bin/sh", ["-c", pipeline])
        let hash = String(decoding: result.output, as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
        guard result.status == 0, hash.count == 44 else {
            throw TestFailure("SPKI hash of \(certificate) failed")
        }
        return hash
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try tool("openssl"))
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestFailure("openssl \(arguments.prefix(2)) failed")
        }
    }
}

/// A TLS listener's YAML flow mapping for `certificates` (cert, key pairs).
func tlsListener(_ certificates: [(cert: String, key: String)], minVersion: String = "1.2") -> String {
    let list = certificates.map { "{ cert: \"\($0.cert)\", key: \"\($0.key)\" }" }.joined(separator: ", ")
    return "{ address: 127.0.0.1:0, tls: { certificates: [\(list)], min_version: \"\(minVersion)\" } }"
}

/// Starts `formgate run` with the `listen:` list `listeners` (the first one's address is
/// `ServerProcess.address`) and the rest of the configuration `yaml`.
func startListeners(_ listeners: [String], _ yaml: String, workers: Int = 2, configPath: String? = nil) throws
    -> ServerProcess
{
    let path = configPath ?? NSTemporaryDirectory() + "formgate-tls-\(UUID().uuidString).yaml"
    try tlsConfig(listeners, yaml, workers: workers).write(toFile: path, atomically: true, encoding: .utf8)
    return try ServerProcess(formgateBinary, ["run", "-c", path], removingAtStop: [path])
}

/// The configuration text `startListeners` writes.
func tlsConfig(_ listeners: [String], _ yaml: String, workers: Int = 2) -> String {
    "listen:\n" + listeners.map { "  - \($0)\n" }.joined() + "workers: \(workers)\naccess_log: stdout\n"
        + yaml
}

extension ServerProcess {
    /// Every address of the `listening on A, B (TLS), upstream …` line, and whether it is TLS.
    var listeners: [(port: Int, tls: Bool)] {
        guard let start = stderr.range(of: "listening on "),
            let end = stderr[start.upperBound...].range(of: ", upstream")
        else { return [] }
        return stderr[start.upperBound..<end.lowerBound].components(separatedBy: ", ").map { entry in
            let address = entry.split(separator: " ").first.map(String.init) ?? ""
            return (Int(address.split(separator: ":").last ?? "") ?? 0, entry.hasSuffix("(TLS)"))
        }
    }

    /// The admin listener's port from the start line (`admin on 127.0.0.1:PORT`).
    var adminPort: Int? {
        Int(
            stderr.components(separatedBy: "admin on 127.0.0.1:").dropFirst().first?.prefix { $0.isNumber }
                ?? "")
    }

    /// A sample's value from `/metrics` (`line` is the name and labels), `nil` when absent.
    func metric(_ line: String) throws -> Int? {
        let client = try RawClient(port: try #require(adminPort, "no admin listener in \(stderr)"))
        client.send("GET /metrics HTTP/1.1\r\nHost: admin\r\n\r\n")
        let text = String(decoding: try #require(client.readResponse()).body, as: UTF8.self)
        for entry in text.split(separator: "\n") where entry.hasPrefix(line + " ") {
            return Int(entry.dropFirst(line.count + 1))
        }
        return nil
    }
}
