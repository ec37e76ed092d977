import HTTPCore

/// Where a `RulePipeline`'s bytes go: its sink (or the `deferred` sink, for file parts under
/// `fields_first`), or, while a hold is pending, a holding buffer that keeps them in order.
///
/// The buffer is a list of segments: bytes for either sink, a hold's gate, and the slots of
/// the values the hold will supply (a digest field's value). `release` writes the segments
/// in order up to the first gate whose hold is not released; nothing is ever dropped except by
/// `discard`. Its size is reported (`heldBytes`) so the caller can pause its client.
struct PipelineOutput<Sink: ByteSink>: ByteSink {
    /// Where the re-encoded body goes; may be replaced between feeds.
    var sink: Sink
    /// With `fieldsFirst`: where file parts and the closing delimiter go.
    var deferred: Sink?
    /// Whether the current writes are for `deferred`.
    var toDeferred = false
    private var segments: [HeldSegment] = []
    /// The bytes kept behind pending holds.
    private(set) var heldBytes = 0
    /// Every byte written so far, held or not (the body's length once it ends).
    private(set) var written: Int64 = 0

    init(sink: Sink) {
        self.sink = sink
    }

    /// Whether a hold is pending (every write goes to the holding buffer).
    var isHolding: Bool { !segments.isEmpty }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        written += Int64(bytes.count)
        guard segments.isEmpty else { return keep(bytes) }
        if toDeferred {
            deferred?.write(bytes)
        } else {
            sink.write(bytes)
        }
    }

    /// Writes `bytes` as `write(_:)` does, sharing them with `reader` when the sink can (never
    /// while holding: held bytes are copied).
    mutating func write(_ bytes: UnsafeRawBufferPointer, sharingWith reader: any SharedBytesReader) -> Bool {
        guard bytes.count > 0, segments.isEmpty else {
            write(bytes)
            return false
        }
        written += Int64(bytes.count)
        if toDeferred {
            return deferred?.write(bytes, sharingWith: reader) ?? false
        }
        return sink.write(bytes, sharingWith: reader)
    }

    private mutating func keep(_ bytes: UnsafeRawBufferPointer) {
        heldBytes += bytes.count
        if case .bytes(let destination) = segments[segments.count - 1].kind, destination == toDeferred {
            segments[segments.count - 1].bytes.append(contentsOf: bytes)
        } else {
            segments.append(HeldSegment(kind: .bytes(toDeferred: toDeferred), bytes: Array(bytes)))
        }
    }

    /// Starts holding at this point: what follows waits until `id` is released.
    mutating func hold(_ id: HoldID) {
        segments.append(HeldSegment(kind: .gate(id)))
    }

    /// The place of the `index`th value `id` supplies when it is released (after `hold(id)`).
    mutating func holdValue(_ id: HoldID, index: Int) {
        precondition(isHolding, "a value slot outside a hold")
        segments.append(HeldSegment(kind: .value(id, index: index, toDeferred: toDeferred)))
    }

    /// Writes the held segments in order, up to the first gate whose hold `values` does not
    /// release (`values` gives a released hold's values, `nil` for a pending one); returns
    /// the number of gates passed.
    mutating func release(_ values: (HoldID) -> [[UInt8]]?) -> Int {
        var passed = 0
        var current: [[UInt8]] = []
        var index = 0
        scan: while index < segments.count {
            switch segments[index].kind {
            case .gate(let id):
                guard let released = values(id) else { break scan }
                current = released
                passed += 1
            case .value(_, let slot, let destination):
                written += Int64(current[slot].count)
                direct(current[slot], toDeferred: destination)
            case .bytes(let destination):
                heldBytes -= segments[index].bytes.count
                direct(segments[index].bytes, toDeferred: destination)
            }
            index += 1
        }
        segments.removeFirst(index)
        return passed
    }

    /// Drops everything held (the request is refused).
    mutating func discard() {
        segments.removeAll()
        heldBytes = 0
    }

    private mutating func direct(_ bytes: [UInt8], toDeferred destination: Bool) {
        if destination {
            deferred?.write(bytes)
        } else {
            sink.write(bytes)
        }
    }
}

/// A piece of what a `PipelineOutput` holds (outside the generic type, so reaching the list
/// needs no generic metadata on the write path).
struct HeldSegment {
    enum Kind {
        case bytes(toDeferred: Bool)
        case gate(HoldID)
        case value(HoldID, index: Int, toDeferred: Bool)
    }
    var kind: Kind
    var bytes: [UInt8] = []
}
