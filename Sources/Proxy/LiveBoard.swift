import EventLoop
import ProxyCore

#if canImport(Glibc)
    import Glibc
#endif

/// One worker's uploads for the admin's live view: a small fixed record per upload in flight
/// and a ring of the last finished ones, written on the worker's loop (`publish`, `finished`)
/// and read by the admin thread without stopping the loop (`SeqlockTable`).
///
/// The loop refreshes the records of the uploads in flight a few times a second
/// (`Worker.publishLive`), not at every read: an upload shorter than that never shows in
/// flight, only finished. Strings are cut to their fields' sizes (at a character boundary).
final class LiveBoard: @unchecked Sendable {
    /// Uploads in flight.
    let inFlight: SeqlockTable
    /// The last finished uploads, a ring of `ringSize`.
    let finishedRing: SeqlockTable
    static let ringSize = 128
    // The loop's own:
    private var serial: UInt64 = 0
    private var finishedSerial: UInt64 = 0
    private var words: [UInt64]

    /// A board for at most `capacity` uploads in flight (more are not shown).
    init(capacity: Int) {
        inFlight = SeqlockTable(words: LiveRecord.words, capacity: max(capacity, 1))
        finishedRing = SeqlockTable(words: LiveFinishedRecord.words, capacity: Self.ringSize)
        for _ in 0..<Self.ringSize { _ = finishedRing.claim() }
        words = Array(repeating: 0, count: max(LiveRecord.words, LiveFinishedRecord.words))
    }

    // MARK: The loop's

    /// Writes `status`'s record into the exchange's slot (claimed now when it has none;
    /// `nil` stays `nil` when the board is full).
    func publish(_ status: LiveStatus, client: String, slot: inout LiveSlot?, now: Int64) {
        if slot == nil {
            guard let claimed = inFlight.claim() else { return }
            serial += 1
            slot = LiveSlot(
                index: claimed, serial: serial,
                startedUnixMilliseconds: Self.unixMilliseconds() - (now - status.startedAt))
        }
        guard let slot else { return }
        let record = LiveRecord(
            serial: slot.serial, status: status, client: client,
            startedUnixMilliseconds: slot.startedUnixMilliseconds)
        record.encode(into: &words)
        words.withUnsafeBufferPointer {
            inFlight.write(slot.index, UnsafeBufferPointer(rebasing: $0[..<LiveRecord.words]))
        }
    }

    /// The exchange ended: its slot is freed and its record goes into the ring.
    func finished(_ record: AccessRecord, slot: inout LiveSlot?) {
        if let taken = slot {
            words.withUnsafeMutableBufferPointer { buffer in
                for index in 0..<LiveRecord.words { buffer[index] = 0 }
                inFlight.write(taken.index, UnsafeBufferPointer(rebasing: buffer[..<LiveRecord.words]))
            }
            inFlight.release(taken.index)
            slot = nil
        }
        finishedSerial += 1
        let entry = LiveFinishedRecord(
            serial: finishedSerial, record: record, finishedUnixMilliseconds: Self.unixMilliseconds())
        entry.encode(into: &words)
        let index = Int(finishedSerial % UInt64(Self.ringSize))
        words.withUnsafeBufferPointer {
            finishedRing.write(index, UnsafeBufferPointer(rebasing: $0[..<LiveFinishedRecord.words]))
        }
    }

    // MARK: Any thread's

    /// The uploads in flight now.
    func readInFlight() -> [LiveRecord] {
        var out: [LiveRecord] = []
        var buffer = [UInt64](repeating: 0, count: LiveRecord.words)
        for slot in 0..<inFlight.readableSlots {
            let read = buffer.withUnsafeMutableBufferPointer { inFlight.read(slot, into: $0) }
            guard read != nil, buffer[0] != 0, let record = LiveRecord(decoding: buffer) else { continue }
            out.append(record)
        }
        return out
    }

    /// The finished uploads the ring holds.
    func readFinished() -> [LiveFinishedRecord] {
        var out: [LiveFinishedRecord] = []
        var buffer = [UInt64](repeating: 0, count: LiveFinishedRecord.words)
        for slot in 0..<Self.ringSize {
            let read = buffer.withUnsafeMutableBufferPointer { finishedRing.read(slot, into: $0) }
            guard read != nil, buffer[0] != 0 else { continue }
            out.append(LiveFinishedRecord(decoding: buffer))
        }
        return out
    }

    static func unixMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}

/// An exchange's place on its worker's board (held by its `ExchangeIO`).
struct LiveSlot {
    var index: Int
    /// Unique per worker: tells a reader that a reused slot holds another upload.
    var serial: UInt64
    /// When the request's head was read (wall clock), fixed when the slot was claimed.
    var startedUnixMilliseconds: Int64
}
