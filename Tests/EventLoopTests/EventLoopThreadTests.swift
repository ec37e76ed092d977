import Foundation
import Synchronization
import Testing

@testable import EventLoop

@Suite struct EventLoopThreadTests {
    @Test func aThreadRunsNamedAndIsJoined() throws {
        let seen = Mutex<String?>(nil)
        let thread = try EventLoopThread.start(name: "formgate-test") {
            let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            seen.withLock { $0 = comm?.trimmingCharacters(in: .newlines) }
        }
        thread.join()
        #expect(seen.withLock { $0 } == "formgate-test")
        thread.join()  // a second join returns at once
    }

    @Test func longNamesAreCutToWhatLinuxKeeps() {
        #expect(EventLoopThread.kernelName("formgate-worker-12") == "formgate-worker")
        #expect(EventLoopThread.kernelName("short") == "short")
        // Never inside a character: "é" is two bytes.
        #expect(EventLoopThread.kernelName("abcdefghijklmné") == "abcdefghijklmn")
    }
}
