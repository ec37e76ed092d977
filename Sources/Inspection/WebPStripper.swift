import HTTPCore

/// Strips a WebP stream chunk by chunk (RIFF: fourcc, 32-bit little-endian size, data, a pad
/// byte after odd sizes): `EXIF`, `XMP ` and, without `keepICC`, `ICCP`.
///
/// Blank mode renames such a chunk to `JUNK` and zeroes its data (pad included); remove mode
/// leaves it out. The VP8X flags of what is stripped (ICC 0x20, EXIF 0x08, XMP 0x04) are
/// cleared as VP8X passes, EXIF's kept under `keepOrientation`: an EXIF chunk of at most
/// 64 KiB is then gathered and rewritten to `MinimalExif` (after its optional `Exif\0\0`
/// prefix); a bigger one, or one without Orientation, is blanked or removed like the others
/// and its stale VP8X flag is fixed by a patch.
///
/// Chunks are walked to the end of the input whatever the RIFF size says (a size that lies
/// hides nothing); a header that is not RIFF/WEBP, or a fourcc outside printable ASCII, makes
/// the rest pass unchanged (`passedThrough`).
struct WebPStripper: Sendable {
    enum State: Sendable {
        case header
        case chunkHeader
        case payload(remaining: Int, action: JPEGStripper.PayloadAction)
        /// An EXIF chunk gathered whole in `chunk` for its Orientation.
        case buffering(remaining: Int)
        case rest
    }

    /// The largest EXIF chunk gathered for its Orientation.
    static let exifBufferLimit = 65_536

    let mode: StripMode
    let keepOrientation: Bool
    let keepICC: Bool
    var state = State.header
    var held = HeldUnit()
    var chunk: [UInt8] = []
    /// Input bytes of earlier `write` calls.
    var consumed: Int64 = 0
    /// The RIFF size as declared.
    var riffSize: UInt32 = 0
    /// Bytes left out so far (remove mode).
    var removed: Int64 = 0
    /// Where the VP8X flags byte left (output offset), and the value it should have when the
    /// EXIF flag kept for `keepOrientation` turned out stale.
    var flags: (offset: Int64, value: UInt8)?
    var flagsFix: UInt8?

    init(options: StripOptions) {
        mode = options.mode
        keepOrientation = options.keepOrientation
        keepICC = options.keepICC
    }

    /// Bytes held back: a partial header, or the EXIF chunk being gathered.
    var heldBytes: Int { held.bytes.count + chunk.count }

    mutating func write(_ walk: inout ByteWalk, into sink: inout some ByteSink, report: inout StripReport) {
        defer { consumed += Int64(walk.bytes.count) }
        while walk.available > 0 {
            switch state {
            case .header:
                guard held.gather(12, from: &walk, into: &sink) else { return }
                guard held.matches("RIFF", at: 0, in: walk), held.matches("WEBP", at: 8, in: walk) else {
                    return malformed(&walk, into: &sink, report: &report)
                }
                riffSize = held.littleEndian32(4, in: walk)
                held.keep(12, walk: &walk, into: &sink)
                state = .chunkHeader
            case .chunkHeader:
                readChunkHeader(&walk, into: &sink, report: &report)
            case .payload(let remaining, let action):
                let count = min(remaining, walk.available)
                switch action {
                case .pass: walk.keep(count)
                case .zero: walk.zero(count, into: &sink)
                case .drop: walk.drop(count, into: &sink)
                }
                state =
                    count < remaining ? .payload(remaining: remaining - count, action: action) : .chunkHeader
            case .buffering(let remaining):
                let count = min(remaining, walk.available)
                chunk.append(contentsOf: walk.next(count))
                walk.drop(count, into: &sink)
                if count < remaining {
                    state = .buffering(remaining: remaining - count)
                } else {
                    emitExif(into: &sink)
                    state = .chunkHeader
                }
            case .rest:
                walk.keep(walk.available)
            }
        }
    }

    /// Ends the stream: a held partial header leaves unchanged, a truncated EXIF chunk
    /// blanked (nothing in remove mode); then the patches are given.
    mutating func finish(into sink: inout some ByteSink, report: inout StripReport) {
        if case .buffering = state {
            if mode == .blank {
                blankChunk()
                sink.write(chunk)
            } else {
                removed += Int64(chunk.count)
            }
            chunk = []
            flagsFix = flags.map { $0.value & ~0x08 }
        } else if held.isHeld {
            held.emit(into: &sink)
            report.passedThrough = true
        }
        state = .rest
        if removed > 0 {
            let size = UInt32(clamping: max(0, Int64(riffSize) - removed))
            report.patches.append((4, (0..<4).map { UInt8(truncatingIfNeeded: size >> (8 * $0)) }))
        }
        if let flags, let flagsFix, flagsFix != flags.value {
            report.patches.append((flags.offset, [flagsFix]))
        }
    }

    private mutating func malformed(
        _ walk: inout ByteWalk, into sink: inout some ByteSink, report: inout StripReport
    ) {
        report.passedThrough = true
        held.passRest(walk: &walk, into: &sink)
        state = .rest
    }

    private mutating func readChunkHeader(
        _ walk: inout ByteWalk, into sink: inout some ByteSink, report: inout StripReport
    ) {
        guard held.gather(8, from: &walk, into: &sink) else { return }
        let start = consumed + Int64(walk.index) - Int64(held.bytes.count)
        for index in 0..<4 where !(0x20...0x7E).contains(held.byte(index, in: walk)) {
            return malformed(&walk, into: &sink, report: &report)
        }
        let type = UInt32(held.bigEndian(0, 4, in: walk))
        let size = Int(held.littleEndian32(4, in: walk))
        let padded = size + size & 1
        let name: String
        switch type {
        case FourCC.of("VP8X") where size >= 1:
            return readFlags(start: start, padded: padded, &walk, into: &sink)
        case FourCC.of("EXIF"): name = "webp:EXIF"
        case FourCC.of("XMP "): name = "webp:XMP"
        case FourCC.of("ICCP") where !keepICC: name = "webp:ICCP"
        default:
            held.keep(8, walk: &walk, into: &sink)
            state = .payload(remaining: padded, action: .pass)
            return
        }
        report.note(name)
        if mode == .remove { report.refuse("webp: the RIFF size must shrink (remove mode)", patchable: true) }
        if type == FourCC.of("EXIF") && keepOrientation {
            if padded <= Self.exifBufferLimit {
                held.take(8, walk: &walk, into: &sink)
                swap(&chunk, &held.bytes)
                held.discard()
                state = .buffering(remaining: padded)
                if padded == 0 {
                    emitExif(into: &sink)
                    state = .chunkHeader
                }
                return
            }
            flagsFix = flags.map { $0.value & ~0x08 }
        }
        if mode == .blank {
            held.take(8, walk: &walk, into: &sink)
            held.bytes.replaceSubrange(0..<4, with: FourCC.bytes(FourCC.of("JUNK")))
            held.emit(into: &sink)
            state = .payload(remaining: padded, action: .zero)
        } else {
            held.drop(8, walk: &walk, into: &sink)
            removed += Int64(8 + padded)
            state = .payload(remaining: padded, action: .drop)
        }
    }

    /// VP8X: clears the flags of what is stripped in its first data byte.
    private mutating func readFlags(
        start: Int64, padded: Int, _ walk: inout ByteWalk, into sink: inout some ByteSink
    ) {
        guard held.gather(9, from: &walk, into: &sink) else { return }
        let old = held.byte(8, in: walk)
        var new = old & ~0x04
        if !keepOrientation { new &= ~0x08 }
        if !keepICC { new &= ~0x20 }
        flags = (start + 8 - removed, new)
        if new == old {
            held.keep(9, walk: &walk, into: &sink)
        } else {
            held.take(9, walk: &walk, into: &sink)
            held.bytes[8] = new
            held.emit(into: &sink)
        }
        state = .payload(remaining: padded - 1, action: .pass)
    }

    /// Emits the gathered EXIF chunk reduced to its Orientation (blanked or left out when it
    /// has none).
    private mutating func emitExif(into sink: inout some ByteSink) {
        defer { chunk = [] }
        let prefix = chunk.count >= 14 && chunk[8..<14].elementsEqual("Exif\0\0".utf8) ? 6 : 0
        guard chunk.count >= 8 + prefix + MinimalExif.tiffCount,
            let found = MinimalExif.orientation(in: chunk, tiffAt: 8 + prefix)
        else {
            flagsFix = flags.map { $0.value & ~0x08 }
            if mode == .blank {
                blankChunk()
                sink.write(chunk)
            } else {
                removed += Int64(chunk.count)
            }
            return
        }
        var end = chunk.count
        if mode == .remove {
            end = 8 + prefix + MinimalExif.tiffCount
            removed += Int64(chunk.count - end)
            chunk.removeSubrange(end...)
            chunk.replaceSubrange(4..<8, with: [UInt8(end - 8), 0, 0, 0])
        }
        MinimalExif.write(
            into: &chunk, at: 8 + prefix, end: end, bigEndian: found.bigEndian, orientation: found.value)
        sink.write(chunk)
    }

    /// Turns the gathered chunk into JUNK with zeroed data.
    private mutating func blankChunk() {
        chunk.replaceSubrange(0..<min(4, chunk.count), with: FourCC.bytes(FourCC.of("JUNK")))
        for index in 8..<max(8, chunk.count) { chunk[index] = 0 }
    }
}
