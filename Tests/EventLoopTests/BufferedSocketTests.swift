import Foundation
import Testing

@testable import EventLoop

/// The plain socket over a Unix socket pair and loopback TCP: watermarks, write flushing,
/// half-close, timeouts, connect failures.
@Suite struct BufferedSocketTests {
    @Test func readingPausesAtTheHighWatermarkAndResumesWhenDrained() throws {
        let harness = try LoopHarness()
        let (reader, writer) = try harness.socketPair()
        let high = 64 * 1024
        reader.consumes = false
        reader.socket.setWatermarks(readHigh: high, writeLow: 0)
        reader.socket.enable()
        writer.socket.enable()
        let sent = pattern(1 << 20)
        writer.socket.output.add(sent)

        #expect(harness.run { reader.socket.input.count >= high })
        // Exactly the watermark, and the read event is off: the rest stays in the kernel.
        #expect(reader.socket.input.count == high)
        #expect(!reader.socket.readArmed)
        let readsAtPause = reader.heard.count

        // Draining a little re-arms reading; it stops again at the watermark.
        var taken = reader.socket.input.remove(10_000)
        #expect(reader.socket.readArmed)
        #expect(harness.run { reader.heard.count > readsAtPause && reader.socket.input.count == high })
        #expect(!reader.socket.readArmed)

        // Draining everything as it comes gets the whole stream, in order.
        reader.onReadable = { taken += $0.socket.input.remove($0.socket.input.count) }
        taken += reader.socket.input.remove(reader.socket.input.count)
        #expect(harness.run { taken.count == sent.count })
        #expect(taken == sent)
        reader.socket.close()
        writer.socket.close()
    }

    @Test func outputQueuedInACallbackIsWrittenWhenItReturns() throws {
        let harness = try LoopHarness()
        let (client, server) = try harness.socketPair()
        client.socket.enable()
        server.socket.enable()
        // The server answers each read with a large reply, from inside the callback: the
        // kernel takes part of it at once and the rest goes through the write event.
        let reply = pattern(8 << 20, seed: 7)
        server.onReadable = { recorder in recorder.socket.output.add(reply) }
        client.socket.output.add("ping")
        #expect(harness.run { client.received.count == reply.count && server.heard.contains(.writable) })
        #expect(server.received == Array("ping".utf8))
        #expect(client.received == reply)
        // socketWritable once the output is empty, not before.
        #expect(server.socket.output.count == 0)
        #expect(server.heard.last == .writable)
        #expect(!server.socket.writeArmed)
        client.socket.close()
        server.socket.close()
    }

    @Test func endOfFileIsReportedAfterTheData() throws {
        let harness = try LoopHarness()
        let (reader, writer) = try harness.socketPair()
        reader.socket.enable()
        writer.socket.enable()
        let sent = pattern(300_000, seed: 3)
        writer.socket.output.add(sent)
        writer.onWritable = { $0.socket.shutdownWrite() }
        #expect(harness.run { reader.events.contains([.reading, .endOfFile]) })
        #expect(reader.received == sent)
        #expect(reader.events == [[.reading, .endOfFile]])
        // Every readable came before the end of file.
        let end = try #require(
            reader.heard.firstIndex(of: .events(SocketEvents([.reading, .endOfFile]).rawValue)))
        #expect(end == reader.heard.count - 1)
        // After a half-close the other direction still works.
        reader.socket.output.add("answer")
        #expect(harness.run { writer.received == Array("answer".utf8) })
        reader.socket.close()
        writer.socket.close()
    }

    @Test func anIdleReadTimesOut() throws {
        let harness = try LoopHarness()
        let (idle, peer) = try harness.socketPair()
        idle.socket.setTimeouts(readMilliseconds: 50, writeMilliseconds: 0)
        idle.socket.enable()
        #expect(harness.run { !idle.events.isEmpty })
        #expect(idle.events == [[.reading, .timeout]])
        #expect(!idle.socket.readArmed)
        idle.socket.close()
        peer.socket.close()
    }

    @Test func aStalledWriteTimesOut() throws {
        let harness = try LoopHarness()
        let (writer, stalled) = try harness.socketPair()
        writer.socket.setTimeouts(readMilliseconds: 0, writeMilliseconds: 50)
        writer.socket.enable()
        // The peer never reads: the kernel buffers fill and the write waits, then times out.
        writer.socket.output.add(pattern(16 << 20))
        #expect(harness.run { !writer.events.isEmpty })
        #expect(writer.events == [[.writing, .timeout]])
        #expect(writer.socket.output.count > 0)
        writer.socket.close()
        stalled.socket.close()
    }

    @Test func connectsOverLoopbackByAddressAndByName() throws {
        let harness = try LoopHarness()
        var accepted: [Recorder] = []
        let listener = try Listener(
            base: harness.base, address: try SocketAddress(parsing: "127.0.0.1:0"), reusePort: false
        ) { fd, _ in
            guard let socket = try? BufferedSocket.accepted(base: harness.base, fd: fd) else { return }
            let recorder = Recorder(harness: harness, socket: socket)
            recorder.socket.enable()
            accepted.append(recorder)
        }
        let port = try #require(listener.boundAddress?.port)
        for host in ["127.0.0.1", "localhost"] {
            let client = Recorder(harness: harness)
            client.onEvents = { recorder, events in
                if events.contains(.connected) {
                    recorder.socket.enable()
                    recorder.socket.output.add("hello \(host)")
                }
            }
            client.adopt(
                try BufferedSocket.connect(
                    base: harness.base, host: host, port: port, tls: nil, delegate: client))
            #expect(harness.run { accepted.last?.received == Array("hello \(host)".utf8) })
            #expect(client.events == [.connected])
            client.socket.close()
        }
        for recorder in accepted { recorder.socket.close() }
    }

    @Test func aRefusedConnectIsReportedFromTheLoop() throws {
        let harness = try LoopHarness()
        // A port that was free a moment ago: bound, then closed.
        let probe = try Listener(
            base: harness.base, address: try SocketAddress(parsing: "127.0.0.1:0"), reusePort: false
        ) { fd, _ in close(fd) }
        let port = try #require(probe.boundAddress?.port)
        _ = consume probe
        let client = Recorder(harness: harness)
        client.adopt(
            try BufferedSocket.connect(
                base: harness.base, host: "127.0.0.1", port: port, tls: nil, delegate: client))
        #expect(client.events.isEmpty)
        #expect(harness.run { !client.events.isEmpty })
        #expect(client.events == [.error])
        client.socket.close()
    }

    @Test func aDescriptorThatIsNotOpenIsRefused() throws {
        let harness = try LoopHarness()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[0])
        close(fds[1])
        #expect(throws: EventLoopError.self) {
            try BufferedSocket.accepted(base: harness.base, fd: fds[0])
        }
    }

    @Test func closeIsIdempotentAndEmptiesTheBuffers() throws {
        let harness = try LoopHarness()
        let (left, right) = try harness.socketPair()
        left.socket.output.add(pattern(1000))
        left.socket.close()
        left.socket.close()
        #expect(!left.socket.isOpen)
        #expect(left.socket.fd == -1)
        #expect(left.socket.output.count == 0)
        // The peer sees the end of file.
        right.socket.enable()
        #expect(harness.run { !right.events.isEmpty })
        #expect(right.events == [[.reading, .endOfFile]] || right.events == [[.reading, .error]])
        right.socket.close()
    }
}
