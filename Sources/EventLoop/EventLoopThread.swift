import CEventSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A named thread started for a loop, a log writer or a worker pool: the one place FormGate
/// calls `pthread_create`. Join it with `join()`; a handle dropped without joining detaches
/// the thread, so its resources go back when it ends.
public final class EventLoopThread: Sendable {
    private let thread: pthread_t
    private let joined = Atomic<Bool>(false)
    /// The name the thread carries (`/proc/PID/task/TID/comm`, `top -H`, `perf`).
    public let name: String

    private init(thread: pthread_t, name: String) {
        self.thread = thread
        self.name = name
    }

    /// Starts `body` on a new thread named `name` (cut to the 15 bytes Linux keeps).
    ///
    /// - Throws: `EventLoopError` when `pthread_create` fails (out of memory, the process's
    ///   thread limit); `body` is then not run.
    @discardableResult
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(EventLoopError)
        -> EventLoopThread
    {
        let shortName = Self.kernelName(name)
        let box = Unmanaged.passRetained(ThreadBody(name: shortName, body: body))
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, threadTrampoline, box.toOpaque())
        guard result == 0 else {
            box.release()
            throw EventLoopError.system("pthread_create (\(shortName))", result)
        }
        return EventLoopThread(thread: thread, name: shortName)
    }

    /// Waits for the thread to finish. Call once, from another thread; later calls return at once.
    public func join() {
        guard !joined.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let result = pthread_join(thread, nil)
        if result != 0 {
            EventLoopFailures.record(EventLoopError.system("pthread_join (\(name))", result).message)
        }
    }

    deinit {
        guard !joined.load(ordering: .acquiring) else { return }
        let result = pthread_detach(thread)
        if result != 0 {
            EventLoopFailures.record(EventLoopError.system("pthread_detach (\(name))", result).message)
        }
    }

    /// `name` cut to at most 15 bytes of UTF-8 on a character boundary (Linux's limit).
    static func kernelName(_ name: String) -> String {
        var kept = ""
        for character in name {
            guard kept.utf8.count + character.utf8.count <= 15 else { break }
            kept.append(character)
        }
        return kept
    }
}

/// What a new thread runs, passed through `pthread_create`'s context pointer.
private final class ThreadBody {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}

private func threadTrampoline(_ context: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    let thread = Unmanaged<ThreadBody>.fromOpaque(context!).takeRetainedValue()
    let result = fg_set_thread_name(thread.name)
    if result != 0 {
        EventLoopFailures.record(EventLoopError.system("pthread_setname_np (\(thread.name))", result).message)
    }
    thread.body()
    return nil
}
