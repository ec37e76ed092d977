import ProxyCore
import SharedState

/// Decodes a route's `rate_limit:` and gives the route its limiter.
enum RateLimitLoader {
    /// `rate_limit:` — at least one limit.
    static func decodeRateLimit(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder)
        -> RateLimitSpec?
    {
        let keys: Set<String> = ["requests_per_second", "burst", "bytes_per_minute", "concurrent", "shared"]
        guard let entries = decoder.mapping(node, path, allowed: keys) else { return nil }
        var spec = RateLimitSpec()
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "requests_per_second":
                guard let text = decoder.string(value, keyPath) else { continue }
                if let rate = Double(text), rate > 0, rate <= 1_000_000 {
                    spec.requestsPerSecond = rate
                } else {
                    decoder.fail(
                        value.mark, keyPath, "expected a rate above 0 (0.5 is one request every 2 s)")
                }
            case "burst": spec.burst = decoder.int(value, keyPath, range: 1...1_000_000)
            case "concurrent": spec.concurrent = decoder.int(value, keyPath, range: 1...1_000_000)
            case "shared": spec.shared = decoder.bool(value, keyPath) ?? false
            default:
                if let size = decoder.size(value, keyPath) {
                    if size > 0 {
                        spec.bytesPerMinute = size
                    } else {
                        decoder.fail(value.mark, keyPath, "must be more than 0")
                    }
                }
            }
        }
        if spec.requestsPerSecond == nil, spec.bytesPerMinute == nil, spec.concurrent == nil {
            decoder.fail(node.mark, path, "give requests_per_second, bytes_per_minute or concurrent")
            return nil
        }
        if spec.burst != nil, spec.requestsPerSecond == nil {
            decoder.fail(node.mark, join(path, "burst"), "burst needs requests_per_second")
        }
        return spec
    }

    /// `rate_limit:` — one limiter per route, shared by every worker; with `shared: true` the
    /// limits are decided in Redis (`redis:` must be configured) and the limiter is the
    /// per-process fallback of `on_error: local`.
    static func addRateLimit(
        _ spec: RateLimitSpec, _ mark: SourceMark, _ path: String, _ decoder: inout ValueDecoder,
        to route: inout Route
    ) {
        let limit = RateLimit(
            requestsPerSecond: spec.requestsPerSecond, burst: spec.burst, bytesPerMinute: spec.bytesPerMinute,
            concurrent: spec.concurrent)
        if let problem = limit.problem { return decoder.fail(mark, path, problem) }
        route.rateLimiter = ClientLimiter(limit: limit)
        guard spec.shared else { return }
        guard let redis = decoder.redis else {
            return decoder.fail(
                mark, join(path, "shared"), "shared: true needs redis: (the Redis the replicas share)")
        }
        route.sharedLimit = SharedRateLimit(
            limit: limit, route: route.name, keyPrefix: redis.keyPrefix, onError: redis.onError,
            timeoutMilliseconds: redis.timeoutMilliseconds)
    }
}
