import CCrypto
import HTTPCore

/// The Lua scripts the shared limits run in Redis, each atomic (Redis runs one script at a
/// time): time is Redis's own (`TIME`), so the replicas' clocks never matter.
///
/// **Requests: GCRA** (the generic cell rate algorithm). One number per client, the
/// theoretical arrival time `tat`: a request at `now` is admitted when `max(tat, now) +
/// interval − now ≤ burst × interval`, and then moves `tat` by one `interval` (1000 /
/// `requests_per_second` ms). It decides exactly what the local token bucket decides (a quiet
/// client may send `burst` at once, then one per interval) with one key of one number that
/// expires when the client is quiet, and no refill arithmetic to drift.
///
/// **Concurrent**: a sorted set of leases scored by their expiry; expired ones are dropped
/// before counting, so a replica that dies frees its slots within the lease's life.
///
/// **Bytes**: the local byte budget's arithmetic (capacity `bytes_per_minute`, refilled
/// continuously), the declared length reserved at admission and the bytes read charged at the
/// end (`endScript`).
///
/// The decision checks every limit before it takes anything: a request refused by one limit
/// takes nothing from the others.
public enum SharedLimitScripts {
    /// A script and its SHA-1 (for `EVALSHA`; `EVAL` when Redis answers `NOSCRIPT`).
    public struct Script: Sendable, Equatable {
        public let source: String
        public let sha1: String

        init(_ source: String) {
            self.source = source
            self.sha1 = Hex.encode(SharedLimitScripts.digest(Array(source.utf8), sha1: true))
        }

        /// `EVALSHA sha1 numkeys keys… arguments…`.
        public func evalsha(keys: [[UInt8]], arguments: [String]) -> [[UInt8]] {
            [Array("EVALSHA".utf8), Array(sha1.utf8), Array(String(keys.count).utf8)] + keys
                + arguments.map { Array($0.utf8) }
        }

        /// The same command as `EVAL` with the source (after `NOSCRIPT`).
        public func eval(fromEvalsha command: [[UInt8]]) -> [[UInt8]] {
            [Array("EVAL".utf8), Array(source.utf8)] + command.dropFirst(2)
        }

        /// `SCRIPT LOAD source` (sent when a connection opens).
        public var load: [[UInt8]] { [Array("SCRIPT".utf8), Array("LOAD".utf8), Array(source.utf8)] }
    }

    /// KEYS: tat, leases, bytes. ARGV: nonce, interval ms ("0.000": off), burst, concurrent
    /// ("0": off), lease member, lease ms, bytes per minute ("0": off), declared bytes (-1:
    /// unknown). Returns `{nonce, "ok" | "requests" | "concurrent" | "bytes", wait ms}`.
    public static let decide = Script(
        """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local interval = tonumber(ARGV[2])
        local tat = 0
        if interval > 0 then
          local burst = tonumber(ARGV[3])
          tat = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
          if tat < now then tat = now end
          tat = tat + interval
          local over = tat - now - burst * interval
          if over > 0 then return {ARGV[1], 'requests', math.ceil(over)} end
        end
        local limit = tonumber(ARGV[4])
        if limit > 0 then
          redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
          if redis.call('ZCARD', KEYS[2]) >= limit then return {ARGV[1], 'concurrent', 1000} end
        end
        local capacity = tonumber(ARGV[7])
        local available = 0
        if capacity > 0 then
          local declared = tonumber(ARGV[8])
          local state = redis.call('HMGET', KEYS[3], 'a', 't')
          available = tonumber(state[1]) or capacity
          local updated = tonumber(state[2]) or now
          if now > updated then available = math.min(capacity, available + (now - updated) * capacity / 60000) end
          local needed = declared
          if declared < 0 then needed = 1 end
          if (declared < 0 and available <= 0) or (declared >= 0 and declared > available) then
            if declared > capacity then return {ARGV[1], 'bytes', 60000} end
            return {ARGV[1], 'bytes', math.ceil((needed - available) * 60000 / capacity)}
          end
          if declared > 0 then available = available - declared end
        end
        if interval > 0 then
          redis.call('SET', KEYS[1], string.format('%.3f', tat), 'PX', math.ceil(tat - now) + 1000)
        end
        if limit > 0 then
          redis.call('ZADD', KEYS[2], now + tonumber(ARGV[6]), ARGV[5])
          redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[6]))
        end
        if capacity > 0 then
          redis.call('HSET', KEYS[3], 'a', string.format('%.3f', available), 't', now)
          redis.call('PEXPIRE', KEYS[3], math.ceil((capacity - available) * 60000 / capacity) + 1000)
        end
        return {ARGV[1], 'ok', 0}
        """)

    /// KEYS: leases, bytes. ARGV: nonce, lease member ("": none), bytes per minute ("0": off),
    /// reserved minus read. Returns `{nonce, "ok", 0}`.
    public static let end = Script(
        """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        if ARGV[2] ~= '' then redis.call('ZREM', KEYS[1], ARGV[2]) end
        local capacity = tonumber(ARGV[3])
        if capacity > 0 then
          local state = redis.call('HMGET', KEYS[2], 'a', 't')
          local available = tonumber(state[1]) or capacity
          local updated = tonumber(state[2]) or now
          if now > updated then available = math.min(capacity, available + (now - updated) * capacity / 60000) end
          available = math.min(capacity, available + tonumber(ARGV[4]))
          redis.call('HSET', KEYS[2], 'a', string.format('%.3f', available), 't', now)
          redis.call('PEXPIRE', KEYS[2], math.ceil((capacity - available) * 60000 / capacity) + 1000)
        end
        return {ARGV[1], 'ok', 0}
        """)

    /// KEYS: lease sets. ARGV: nonce, lease ms, then one member per key. Pushes each lease's
    /// expiry a lease's life from now (re-adding one that expired). Returns `{nonce, "ok", 0}`.
    public static let renew = Script(
        """
        local t = redis.call('TIME')
        local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        local life = tonumber(ARGV[2])
        for i, key in ipairs(KEYS) do
          redis.call('ZADD', key, now + life, ARGV[i + 2])
          redis.call('PEXPIRE', key, life)
        end
        return {ARGV[1], 'ok', 0}
        """)

    /// SHA-1 (`sha1: true`) or SHA-256 of `bytes`.
    static func digest(_ bytes: [UInt8], sha1: Bool) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBytes { output in
                EVP_Digest(
                    input.baseAddress, input.count, output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    &length, sha1 ? EVP_sha1() : EVP_sha256(), nil)
            }
        }
        // EVP_Digest fails only when OpenSSL cannot allocate: as with any allocation, stop.
        precondition(ok == 1, "EVP_Digest failed")
        return Array(digest[0..<Int(length)])
    }
}
