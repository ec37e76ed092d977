import Testing

@testable import Proxy

#if canImport(Glibc)
    import Glibc
#endif

/// The accept-failure log: the first failure at once, then one line per interval with the
/// count, driven by a fake clock.
@Suite struct AcceptErrorTallyTests {
    @Test func theFirstFailureIsWrittenAtOnce() throws {
        var tally = AcceptErrorTally(interval: 10_000, pause: 500)
        let written = tally.failed(errno: EMFILE, now: 1_000)
        let line = try #require(written)
        #expect(line.hasPrefix("accept() failed 1 time (descriptors 1), latest: Too many open files"))
        #expect(line.contains("accepting pauses 0.5 s after each failure"))
        #expect(tally.reportDue == nil)
    }

    @Test func laterFailuresWaitForTheIntervalAndAreCounted() throws {
        var tally = AcceptErrorTally(interval: 10_000, pause: 500)
        _ = tally.failed(errno: EMFILE, now: 0)
        // Two failures a second (one per pause) for ten seconds: no line until the interval ends.
        for step in 1..<20 {
            #expect(tally.failed(errno: step % 5 == 0 ? ENFILE : EMFILE, now: Int64(step) * 500) == nil)
        }
        #expect(tally.reportDue == 10_000)
        #expect(tally.report(now: 9_999) == nil)
        let written = tally.report(now: 10_000)
        let line = try #require(written)
        #expect(line.hasPrefix("accept() failed 19 times in the last 10.0 s (descriptors 19)"))
        #expect(tally.reportDue == nil)
        #expect(tally.report(now: 30_000) == nil)
    }

    @Test func aFailureAfterAQuietIntervalIsWrittenAtOnce() throws {
        var tally = AcceptErrorTally(interval: 10_000, pause: 500)
        _ = tally.failed(errno: EMFILE, now: 0)
        let written = tally.failed(errno: ENOBUFS, now: 25_000)
        let line = try #require(written)
        #expect(line.hasPrefix("accept() failed 1 time in the last 25.0 s (memory 1)"))
    }

    @Test func reasonsAreCountedApart() throws {
        var tally = AcceptErrorTally(interval: 1_000, pause: 500)
        _ = tally.failed(errno: EMFILE, now: 0)
        _ = tally.failed(errno: ENOMEM, now: 100)
        _ = tally.failed(errno: EPERM, now: 200)
        _ = tally.failed(errno: ENFILE, now: 300)
        let written = tally.report(now: 1_000)
        let line = try #require(written)
        #expect(
            line.hasPrefix("accept() failed 3 times in the last 1.0 s (descriptors 1, memory 1, other 1)"))
        #expect(AcceptErrorTally.Reason(errno: ENFILE) == .descriptors)
    }
}
