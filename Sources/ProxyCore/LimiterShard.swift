import Synchronization

/// One shard of a `ClientLimiter`'s table: its own lock and dictionary (a class so that the
/// shards, each a `Mutex`, can live in an array).
final class LimiterShard: Sendable {
    let state = Mutex(State())

    /// What one shard's lock guards.
    struct State: ~Copyable {
        var entries: [ClientKey: ClientLimits] = [:]
        /// Until when a full shard is not swept again (the last sweep freed too little).
        var sweepBlockedUntil = Int64.min
        /// Admissions without state since the start.
        var untracked = 0

        /// Where a request stands.
        enum Outcome {
            case tracked(reserved: Int64)
            case untracked
            case refused(ClientLimits.Refusal)
        }

        mutating func admit(
            _ key: ClientKey, declared: Int64?, limit: RateLimit, capacity: Int, now: Int64
        ) -> Outcome {
            if let index = entries.index(forKey: key) {
                return outcome(
                    entries.values[index].admit(declared: declared, concurrent: limit.concurrent, now: now))
            }
            var fresh = ClientLimits(limit, now: now)
            let result = fresh.admit(declared: declared, concurrent: limit.concurrent, now: now)
            guard case .success = result else { return outcome(result) }
            if entries.count >= capacity { sweep(capacity: capacity, now: now) }
            guard entries.count < capacity else {
                untracked += 1
                return .untracked
            }
            entries[key] = fresh
            return outcome(result)
        }

        mutating func end(_ key: ClientKey, reserved: Int64, read: Int64, now: Int64) {
            guard let index = entries.index(forKey: key) else { return }
            entries.values[index].end(reserved: reserved, read: read, now: now)
        }

        /// Forgets the idle entries of a full shard, unless a recent sweep freed too little.
        private mutating func sweep(capacity: Int, now: Int64) {
            guard now >= sweepBlockedUntil else { return }
            let before = entries.count
            entries = entries.filter { !$0.value.isIdle(now: now) }
            if before - entries.count < max(1, capacity / 8) { sweepBlockedUntil = now + 1000 }
        }

        private func outcome(_ result: Result<Int64, ClientLimits.Refusal>) -> Outcome {
            switch result {
            case .success(let reserved): .tracked(reserved: reserved)
            case .failure(let refusal): .refused(refusal)
            }
        }
    }
}
