import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Reads a pipe on a thread of its own, with blocking `read(2)` until end of file, handing each
/// chunk to `onData`. It replaces `FileHandle.readabilityHandler`, whose dispatch source on
/// swift-corelibs-foundation can still fire for a descriptor closed under it: a test process
/// crashed inside libdispatch (`_dispatch_event_loop_drain`) during a clean-clone CI run. The
/// thread holds the pipe, so its descriptor stays open until the writer's end closes (the child
/// exited) and the last chunk was handed on.
final class PipeReader: Sendable {
    private let finished = DispatchSemaphore(value: 0)

    init(_ pipe: Pipe, onData: @escaping @Sendable (Data) -> Void) {
        let thread = Thread { [finished] in
            let descriptor = pipe.fileHandleForReading.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { break }
                onData(Data(buffer[0..<count]))
            }
            finished.signal()
        }
        thread.name = "PipeReader"
        thread.start()
    }

    /// Waits (at most `seconds`) until the writer's end closed and every chunk was handed on;
    /// a grandchild that inherited the writer's end may keep it open longer.
    func wait(seconds: Double = 5) {
        _ = finished.wait(timeout: .now() + seconds)
    }
}
