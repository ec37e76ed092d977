import Foundation
import Resumable
import SharedState
import Testing

@testable import ObjectStore

#if canImport(Glibc)
    import Glibc
#endif

struct SetupFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A loopback port nothing listens on now.
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw SetupFailure("socket: errno \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
        }
    }
    guard bound else { throw SetupFailure("bind: errno \(errno)") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts connections on the loopback `port`.
func accepts(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}

/// A child process stopped (SIGKILL) when released.
final class Child: @unchecked Sendable {
    let process = Process()

    init(_ executable: String, _ arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Polls `condition` every 20 ms for up to `seconds`.
@discardableResult
func eventually(within seconds: Double, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// moto's S3 server and a redis-server, both on free loopback ports, and a bucket: what the
/// store tests run against. moto comes from `FORMGATE_SDK_PYTHON`'s directory (`make sdk-venv`);
/// a missing tool fails the test.
final class StoreServers: @unchecked Sendable {
    let moto: Child
    let redis: Child
    let motoPort: Int
    let redisPort: Int
    let bucket = "tus-store"

    init() throws {
        guard let python = ProcessInfo.processInfo.environment["FORMGATE_SDK_PYTHON"] else {
            throw SetupFailure("FORMGATE_SDK_PYTHON is not set (make sdk-venv)")
        }
        let motoServer = URL(fileURLWithPath: python).deletingLastPathComponent().appendingPathComponent(
            "moto_server"
        ).path
        guard FileManager.default.isExecutableFile(atPath: motoServer) else {
            throw SetupFailure("\(motoServer) is missing (make sdk-venv installs moto[server])")
        }
        motoPort = try freePort()
        moto = try Child(motoServer, ["-H", "127.0.0.1", "-p", "\(motoPort)"])
        redisPort = try freePort()
        redis = try Child(
            "/usr/bin/redis-server",
            [
                "--port", "\(redisPort)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--daemonize", "no", "--logfile", "",
            ])
        guard eventually(within: 60, { accepts(motoPort) }) else {
            throw SetupFailure("moto_server did not start")
        }
        guard eventually(within: 30, { accepts(redisPort) }) else {
            throw SetupFailure("redis-server did not start")
        }
        _ = try client(prefix: "").send("PUT", key: nil)
    }

    func settings(prefix: String, partSize: Int = ObjectStoreSettings.minimumPartSize) -> ObjectStoreSettings
    {
        ObjectStoreSettings(
            scheme: "http", host: "127.0.0.1", port: motoPort, bucket: bucket, region: "us-east-1",
            prefix: prefix,
            accessKey: "testing", secretKey: "testing", partSize: partSize)
    }

    var redisSettings: RedisSettings {
        RedisSettings(address: .tcp(host: "127.0.0.1", port: redisPort), keyPrefix: "test:")
    }

    func client(prefix: String) -> S3Client { S3Client(settings: settings(prefix: prefix)) }

    /// A store on the bucket under `prefix` (several may share one, as replicas do).
    func store(prefix: String, lockMilliseconds: Int64 = 30_000) -> S3UploadStore {
        S3UploadStore(
            settings: settings(prefix: prefix), redis: redisSettings, lockMilliseconds: lockMilliseconds)
    }
}

/// Seeded bytes (SplitMix64): the same for a seed on every run.
func seededBytes(_ count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    var bytes = [UInt8](repeating: 0, count: count)
    var index = 0
    while index < count {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        value ^= value >> 31
        for shift in stride(from: 0, to: 64, by: 8) where index < count {
            bytes[index] = UInt8(truncatingIfNeeded: value >> UInt64(shift))
            index += 1
        }
    }
    return bytes
}
