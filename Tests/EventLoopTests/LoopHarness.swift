import Foundation
import Testing

@testable import EventLoop

/// One loop on the test's thread and the sockets under test. `run(until:)` turns the loop
/// until a condition holds after some callback, or until a generous deadline passes (the
/// condition is the event; the deadline only ends a test that would hang).
final class LoopHarness {
    let base: EventBase
    private var condition: () -> Bool = { true }
    private(set) var timedOut = false

    init() throws {
        base = try EventBase()
    }

    /// Runs the loop until `condition` holds; returns `false` when the deadline passed first.
    @discardableResult
    func run(within seconds: Int64 = 60, until condition: @escaping () -> Bool) -> Bool {
        guard !condition() else { return true }
        self.condition = condition
        timedOut = false
        let deadline = Timer(base: base) { [unowned self] in
            timedOut = true
            base.stop()
        }
        deadline.schedule(milliseconds: seconds * 1000)
        base.run()
        deadline.cancel()
        return !timedOut && condition()
    }

    /// Called by the recorders after each callback.
    func check() {
        if condition() { base.stop() }
    }

    /// A connected pair of sockets on this loop (a Unix socket pair: the same stream code as
    /// TCP, without ports).
    func socketPair() throws -> (Recorder, Recorder) {
        var fds: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        let left = Recorder(harness: self, socket: try BufferedSocket.accepted(base: base, fd: fds[0]))
        let right = Recorder(harness: self, socket: try BufferedSocket.accepted(base: base, fd: fds[1]))
        return (left, right)
    }
}

/// A socket's delegate that records what it hears, in order.
final class Recorder: BufferedSocketDelegate {
    enum Heard: Equatable {
        case readable(total: Int)
        case writable
        case events(SocketEvents.RawValue)
    }

    unowned let harness: LoopHarness
    /// The socket heard; set at creation, or by `adopt` for a connecting socket.
    private(set) var socket: BufferedSocket!
    var heard: [Heard] = []
    /// Everything taken from the input (when `consumes` is set).
    var received: [UInt8] = []
    /// Whether each read is taken out of the input at once.
    var consumes = true
    /// Runs after each readable callback (e.g. to answer).
    var onReadable: ((Recorder) -> Void)?
    var onEvents: ((Recorder, SocketEvents) -> Void)?
    var onWritable: ((Recorder) -> Void)?

    init(harness: LoopHarness, socket: BufferedSocket? = nil) {
        self.harness = harness
        self.socket = socket
        socket?.delegate = self
    }

    /// Replaces the socket (a connecting one the recorder should hear).
    func adopt(_ socket: BufferedSocket) {
        self.socket = socket
        socket.delegate = self
    }

    var events: [SocketEvents] {
        heard.compactMap { if case .events(let raw) = $0 { SocketEvents(rawValue: raw) } else { nil } }
    }

    func socketReadable(_ socket: BufferedSocket) {
        if consumes { received += socket.input.remove(socket.input.count) }
        heard.append(.readable(total: consumes ? received.count : socket.input.count))
        onReadable?(self)
        harness.check()
    }

    func socketWritable(_ socket: BufferedSocket) {
        heard.append(.writable)
        onWritable?(self)
        harness.check()
    }

    func socket(_ socket: BufferedSocket, events: SocketEvents) {
        heard.append(.events(events.rawValue))
        onEvents?(self, events)
        harness.check()
    }
}

/// `count` bytes of a pattern that does not repeat at any power-of-two period.
func pattern(_ count: Int, seed: UInt32 = 1) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state = state &* 1_664_525 &+ 1_013_904_223
        return UInt8(truncatingIfNeeded: state >> 24)
    }
}
