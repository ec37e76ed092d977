import Config
import Testing

@Suite struct DescriptorBudgetTests {
    private func config(workers: Int, connections: Int) -> ServerConfig {
        var config = ServerConfig()
        config.workers = workers
        config.limits.connections = connections
        return config
    }

    @Test func aLargeLimitKeepsTheConfiguredCap() {
        #expect(config(workers: 2, connections: 10_000).connectionCap(descriptorLimit: 1_048_576) == 10_000)
    }

    @Test func aSmallLimitClampsToWhatThreeDescriptorsPerClientLeave() {
        // 1024 - (32 + 16 * 2) = 960 descriptors, 3 per client.
        #expect(config(workers: 2, connections: 10_000).connectionCap(descriptorLimit: 1024) == 320)
        // 256 - 64 = 192.
        #expect(config(workers: 2, connections: 10_000).connectionCap(descriptorLimit: 256) == 64)
        #expect(config(workers: 4, connections: 10_000).connectionCap(descriptorLimit: 256) == 53)
    }

    @Test func theCapNeverExceedsTheConfiguredOne() {
        #expect(config(workers: 2, connections: 50).connectionCap(descriptorLimit: 256) == 50)
    }

    @Test func aLimitBelowTheReserveStillLetsEachWorkerServeOne() {
        #expect(config(workers: 2, connections: 10_000).connectionCap(descriptorLimit: 40) == 2)
    }
}
