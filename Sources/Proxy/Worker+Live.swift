import EventLoop
import ProxyCore

extension Worker {
    /// How often the records of the uploads in flight are refreshed (milliseconds).
    static let livePublishInterval: Int64 = 250

    /// The most uploads in flight one worker shows (memory is taken 256 at a time as needed).
    static let liveCapacity = 16384

    /// Refreshes the live board's records of every upload in flight on this worker.
    func publishLive() {
        for client in clients.values { client.publishLive() }
    }

    /// An exchange ended: an upload (one that showed in flight, or had a body, or asked to
    /// send one) goes into the board's ring of finished uploads.
    func liveFinished(_ record: AccessRecord, io: ExchangeIO?) {
        guard record.requestID != nil else { return }
        let upload =
            io?.liveSlot != nil || record.bytesIn > 0 || record.method == "POST" || record.method == "PUT"
            || record.method == "PATCH"
        guard upload else { return }
        var slot = io?.liveSlot
        live.finished(record, slot: &slot)
        io?.liveSlot = nil
    }
}
