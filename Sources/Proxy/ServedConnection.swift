/// A client connection a worker keeps open: HTTP/1.1 (`ClientConnection`) or HTTP/2
/// (`HTTP2Connection`).
protocol ServedConnection: AnyObject {
    /// The worker drains: idle connections close, busy ones after their exchanges.
    func drain()
    /// The worker stops: close now.
    func close()
    /// The worker's hashing queue reported progress.
    func hashingProgressed()
    /// A local responder's work (a tus store job, a delivery) progressed.
    func localProgressed()
    /// Writes the records of its uploads in flight on the worker's live board.
    func publishLive()
}

extension ClientConnection: ServedConnection {}
