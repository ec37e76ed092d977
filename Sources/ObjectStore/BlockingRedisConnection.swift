import SharedState

#if canImport(Glibc)
    import Glibc
#endif

/// A blocking Redis connection for the store threads (the tus locks): RESP2 through
/// SharedState's codec, `AUTH` and `SELECT` on connect, every command under the settings'
/// timeout (at least a second: a lock is worth a short wait, unlike a rate-limit decision).
/// A connection that failed is dropped; the next command connects again.
///
/// Not thread-safe: `RedisLock` keeps a few and hands each to one caller at a time. Errors name
/// the address, never the password.
final class BlockingRedisConnection: @unchecked Sendable {
    private let settings: RedisSettings
    private var socket: BlockingSocket?
    private var reader = RESPReader()

    init(settings: RedisSettings) {
        self.settings = settings
    }

    var timeoutMilliseconds: Int64 { max(settings.timeoutMilliseconds, 1000) }

    /// Runs one command and returns its reply (an error reply is a reply, not a throw).
    func command(_ arguments: [String]) throws(RedisFailure) -> RESPValue {
        do throws(RedisFailure) {
            let socket = try connected()
            return try roundTrip(socket, arguments)
        } catch {
            drop()
            throw error
        }
    }

    private func connected() throws(RedisFailure) -> BlockingSocket {
        if let socket { return socket }
        let opened: BlockingSocket
        do throws(BlockingSocket.Failure) {
            switch settings.address {
            case .tcp(let host, let port):
                opened = try BlockingSocket.connect(
                    host: host, port: port, timeoutMilliseconds: timeoutMilliseconds, tls: false)
            case .unix(let path):
                opened = try BlockingSocket.connect(unixPath: path, timeoutMilliseconds: timeoutMilliseconds)
            }
        } catch {
            throw RedisFailure("redis \(settings.displayAddress): \(error.call) (errno \(error.code))")
        }
        reader = RESPReader()
        if let password = settings.password {
            let auth = settings.username.map { ["AUTH", $0, password] } ?? ["AUTH", password]
            guard case .simple = try roundTrip(opened, auth) else {
                throw RedisFailure("redis \(settings.displayAddress): AUTH refused")
            }
        }
        if settings.database != 0 {
            guard case .simple = try roundTrip(opened, ["SELECT", String(settings.database)]) else {
                throw RedisFailure("redis \(settings.displayAddress): SELECT \(settings.database) refused")
            }
        }
        socket = opened
        return opened
    }

    private func roundTrip(_ socket: BlockingSocket, _ arguments: [String]) throws(RedisFailure) -> RESPValue
    {
        do throws(BlockingSocket.Failure) {
            try socket.send(RESPCommand.encode(arguments))
        } catch {
            throw RedisFailure("redis \(settings.displayAddress): \(error.call) (errno \(error.code))")
        }
        while true {
            do throws(RESPError) {
                if let value = try reader.next() { return value }
            } catch {
                throw RedisFailure("redis \(settings.displayAddress): bad reply (\(error))")
            }
            let chunk: [UInt8]
            do throws(BlockingSocket.Failure) {
                chunk = try socket.receive(upTo: 4096)
            } catch {
                throw RedisFailure("redis \(settings.displayAddress): \(error.call) (errno \(error.code))")
            }
            guard !chunk.isEmpty else {
                throw RedisFailure("redis \(settings.displayAddress): connection closed")
            }
            chunk.withUnsafeBytes { reader.take($0) }
        }
    }

    private func drop() {
        socket?.close()
        socket = nil
        reader = RESPReader()
    }
}

/// Why a Redis command got no reply (the address and the failure; never the password).
struct RedisFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
