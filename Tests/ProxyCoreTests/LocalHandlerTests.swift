import HTTPCore
import ProxyCore
import Synchronization
import Testing

/// A test handler: takes the body while the test gives it room, answers `201` with what it
/// received once the body ends, or `413` as soon as more than `limit` bytes came.
final class CountingHandler: LocalHandler {
    struct State {
        var room: Int
        var received: [UInt8] = []
    }

    let state: Mutex<State>
    let limit: Int

    init(room: Int = .max, limit: Int = .max) {
        state = Mutex(State(room: room))
        self.limit = limit
    }

    /// Gives the responder `count` more bytes of room.
    func open(_ count: Int) { state.withLock { $0.room += count } }

    var received: [UInt8] { state.withLock { $0.received } }

    func responder(for request: LocalRequest) -> any LocalResponder {
        Responder(handler: self, method: request.head.method)
    }

    struct Responder: LocalResponder {
        let handler: CountingHandler
        let method: String
        var answer: LocalAnswer?

        var room: Int { handler.state.withLock { $0.room } }

        mutating func body(_ bytes: UnsafeRawBufferPointer, now: Int64) {
            let total = handler.state.withLock {
                $0.room -= bytes.count
                $0.received += bytes
                return $0.received.count
            }
            if total > handler.limit { answer = LocalAnswer(status: 413, body: Array("too much\n".utf8)) }
        }

        mutating func end(now: Int64) {
            let count = handler.received.count
            var headers = HeaderFields()
            headers.append(name: "Content-Type", value: "text/plain")
            answer = LocalAnswer(
                status: 201, headers: headers, body: Array("\(method) \(count) bytes\n".utf8))
        }
    }
}

/// A route answered inside FormGate (`LocalHandler`): the body goes to the handler with
/// backpressure, its answer to the client through the exchange's actions, on HTTP/1.1 and on
/// an HTTP/2 stream; nothing goes upstream.
@Suite struct LocalHandlerTests {
    static func routes(_ handler: CountingHandler) -> RouteTable {
        var route = Route(pathPrefix: "/local")
        route.local = handler
        return RouteTable([route])
    }

    static func post(_ body: String, close: Bool = false) -> String {
        "POST /local/x HTTP/1.1\r\nHost: t\r\nContent-Length: \(body.utf8.count)\r\n"
            + (close ? "Connection: close\r\n" : "") + "\r\n" + body
    }

    @Test func theHandlerAnswersAndTheConnectionCarriesTheNextRequest() {
        let handler = CountingHandler()
        let harness = Harness(routes: Self.routes(handler))
        harness.clientSends(Self.post("twenty-one bytes long") + Self.post("more"))
        let answer = String(
            decoding: harness.shell.clientReceived + harness.shell.clientOutput, as: UTF8.self)
        #expect(
            answer.hasPrefix("HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\nContent-Length: 14\r\n"))
        #expect(answer.contains("\r\n\r\nPOST 21 bytes\n"))
        #expect(answer.contains("\r\n\r\nPOST 25 bytes\n"), "the second request, kept alive")
        #expect(handler.received == Array("twenty-one bytes longmore".utf8))
        #expect(harness.shell.connects.isEmpty, "nothing upstream")
        #expect(harness.statuses == [201, 201])
        #expect(harness.shell.records.allSatisfy { $0.bytesIn > 0 })
    }

    @Test func aHandlerWithoutRoomPausesTheClientUntilItHasSome() {
        let handler = CountingHandler(room: 8)
        let harness = Harness(routes: Self.routes(handler))
        harness.clientSends(Self.post("0123456789abcdefghij"))
        #expect(handler.received == Array("01234567".utf8))
        #expect(!harness.shell.clientReading, "paused while the handler has no room")
        #expect(harness.statuses.isEmpty)
        handler.open(100)
        harness.localProgress()
        #expect(harness.shell.clientReading)
        #expect(handler.received == Array("0123456789abcdefghij".utf8))
        #expect(harness.statuses == [201])
    }

    @Test func anEarlyAnswerLeavesTheRestUnreadAndTheConnectionLingers() {
        let handler = CountingHandler(room: 4, limit: 3)
        let harness = Harness(routes: Self.routes(handler))
        harness.clientSends(Self.post(String(repeating: "x", count: 100)))
        let answer = String(
            decoding: harness.shell.clientReceived + harness.shell.clientOutput, as: UTF8.self)
        #expect(answer.hasPrefix("HTTP/1.1 413 Content Too Large\r\n"))
        #expect(answer.contains("Connection: close\r\n"))
        #expect(handler.received.count == 4)
        #expect(harness.statuses == [413])
        #expect(harness.shell.connects.isEmpty)
    }

    @Test func anHTTP2StreamGetsHeadersDataAndEndStream() throws {
        let handler = CountingHandler()
        let harness = try StreamHarness(
            path: "/local/y", fields: [("content-length", "5")], routes: Self.routes(handler))
        harness.clientSends("hello")
        harness.clientEndsStream()
        let head = try #require(harness.shell.streamHeads.first)
        #expect(head.status == 201)
        #expect(head.field("content-length") == "13")
        #expect(!head.endsStream)
        #expect(
            String(decoding: harness.shell.clientReceived + harness.shell.clientOutput, as: UTF8.self)
                == "POST 5 bytes\n")
        #expect(harness.shell.streamEnds == 1)
        #expect(harness.record?.status == 201)
        #expect(harness.shell.connects.isEmpty)
    }
}

extension Harness {
    /// The local responder's work progressed.
    func localProgress() {
        machine.localProgress(input: shell.clientInput, levels: shell.levels, now: now, actions: &actions)
        execute()
    }
}
