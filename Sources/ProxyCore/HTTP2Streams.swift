public import HTTP1

/// What the shell holds and knows of an HTTP/2 connection's streams, read by
/// `HTTP2ConnectionStateMachine` when an event needs it: a stream's input and how much the
/// session handed to it, the sink and the buffer levels of its exchange, and whether its
/// response waits behind the client's window. The shell passes itself with every event that
/// reaches a stream's exchange; it never assembles these values itself.
public protocol HTTP2Streams<Sink> {
    /// The shell's request body sink.
    associatedtype Sink: RequestBodySink
    /// A stream's input: the DATA taken from the session.
    associatedtype Input: ByteSource

    /// Stream `id`'s input: the DATA its exchange has not handed on (empty when the shell
    /// holds nothing for it).
    func input(_ id: Int32) -> Input
    /// The DATA bytes the session has handed to stream `id`'s input so far; `nil` once it
    /// forgot the stream.
    func takenCount(_ id: Int32) -> Int?
    /// A request body sink over stream `id`'s exchange I/O.
    func sink(_ id: Int32) -> Sink
    /// The buffer counts stream `id`'s exchange decides backpressure from; `clientOutput` is
    /// what the session still queues of its response.
    func levels(_ id: Int32) -> BufferLevels
    /// Whether stream `id` has response bytes queued that the client's window keeps back.
    func isStalled(_ id: Int32) -> Bool
}
