import HTTPCore

/// Strips a HEIC/HEIF/AVIF stream (ISO BMFF) box by box: the top-level `meta` box is gathered
/// whole (at most `metaLimit` bytes) and its Exif and XMP items neutralised (`HEICMeta`); their
/// data in later boxes (`mdat`) is zeroed as it streams by, from a sorted list of absolute
/// ranges. Remove mode behaves as blank mode (item locations are file offsets: cutting bytes
/// out would move every image).
///
/// Item data that was already sent when `meta` arrives (meta after mdat) cannot be zeroed in
/// the stream: `unstrippable` is set and `patches` zero it for a caller that spools. The first
/// box must be `ftyp`; a box smaller than its header, a top-level type outside printable ASCII,
/// a malformed `meta`, or one over the limit or running to the end of the file makes the rest
/// pass unchanged (`passedThrough`). Box headers are never zeroed, only payloads.
struct HEICStripper: Sendable {
    enum State: Sendable {
        case boxHeader
        /// A box's payload; nil: to the end of the file.
        case payload(remaining: Int64?)
        /// The meta box gathered in `meta`.
        case meta(remaining: Int)
        case rest
    }

    /// The largest `meta` box gathered.
    static let metaLimit = 1 << 20
    /// The most bytes of zeros given in `patches`.
    static let patchLimit = 1 << 24

    var state = State.boxHeader
    var held = HeldUnit()
    var meta: [UInt8] = []
    var metaStart: Int64 = 0
    var metaHeaderCount = 0
    var sawFileType = false
    /// Input bytes of earlier `write` calls.
    var consumed: Int64 = 0
    /// Ranges of input still to be zeroed, sorted and disjoint; those before `nextRange` are
    /// behind.
    var ranges: [Range<Int64>] = []
    var nextRange = 0
    var patchBytes = 0

    init(options: StripOptions) {}

    /// Bytes held back: a partial box header, or the meta box being gathered.
    var heldBytes: Int { held.bytes.count + meta.count }

    mutating func write(_ walk: inout ByteWalk, into sink: inout some ByteSink, report: inout StripReport) {
        defer { consumed += Int64(walk.bytes.count) }
        while walk.available > 0 {
            switch state {
            case .boxHeader:
                readBoxHeader(&walk, into: &sink, report: &report)
            case .payload(let remaining):
                let count = remaining.map { Int(min(Int64(walk.available), $0)) } ?? walk.available
                pass(count, &walk, into: &sink)
                if let remaining {
                    state = remaining > count ? .payload(remaining: remaining - Int64(count)) : .boxHeader
                }
            case .meta(let remaining):
                let count = min(remaining, walk.available)
                meta.append(contentsOf: walk.next(count))
                walk.drop(count, into: &sink)
                state = .meta(remaining: remaining - count)
                if count == remaining { emitMeta(into: &sink, report: &report) }
            case .rest:
                walk.keep(walk.available)
            }
        }
    }

    /// Ends the stream: a held partial header or a truncated meta box leaves unchanged.
    mutating func finish(into sink: inout some ByteSink, report: inout StripReport) {
        if case .meta = state {
            sink.write(meta)
            meta = []
            report.passedThrough = true
        } else if held.isHeld {
            held.emit(into: &sink)
            report.passedThrough = true
        }
        state = .rest
    }

    private mutating func malformed(
        _ walk: inout ByteWalk, into sink: inout some ByteSink, report: inout StripReport
    ) {
        report.passedThrough = true
        held.passRest(walk: &walk, into: &sink)
        state = .rest
    }

    private mutating func readBoxHeader(
        _ walk: inout ByteWalk, into sink: inout some ByteSink, report: inout StripReport
    ) {
        guard held.gather(8, from: &walk, into: &sink) else { return }
        let start = consumed + Int64(walk.index) - Int64(held.bytes.count)
        let size32 = held.bigEndian(0, 4, in: walk)
        let type = UInt32(held.bigEndian(4, 4, in: walk))
        for index in 4..<8 where !(0x20...0x7E).contains(held.byte(index, in: walk)) {
            return malformed(&walk, into: &sink, report: &report)
        }
        guard sawFileType || type == FourCC.of("ftyp") else {
            return malformed(&walk, into: &sink, report: &report)
        }
        sawFileType = true
        var headerCount = 8
        var size: Int64? = Int64(size32)
        if size32 == 1 {
            guard held.gather(16, from: &walk, into: &sink) else { return }
            let large = held.bigEndian(8, 8, in: walk)
            guard large <= UInt64(Int64.max) else { return malformed(&walk, into: &sink, report: &report) }
            headerCount = 16
            size = Int64(large)
        } else if size32 == 0 {
            size = nil
        }
        if let size, size < headerCount { return malformed(&walk, into: &sink, report: &report) }
        if type == FourCC.of("meta") {
            guard let size, size <= Self.metaLimit else {
                return malformed(&walk, into: &sink, report: &report)
            }
            held.take(headerCount, walk: &walk, into: &sink)
            swap(&meta, &held.bytes)
            held.discard()
            metaStart = start
            metaHeaderCount = headerCount
            state = .meta(remaining: Int(size) - headerCount)
            if size == headerCount { emitMeta(into: &sink, report: &report) }
            return
        }
        held.keep(headerCount, walk: &walk, into: &sink)
        state = .payload(remaining: size.map { $0 - Int64(headerCount) })
    }

    /// Neutralises the gathered meta box and emits it; notes the item data still to come.
    private mutating func emitMeta(into sink: inout some ByteSink, report: inout StripReport) {
        defer {
            meta = []
            if case .meta = state { state = .boxHeader }
        }
        guard let outcome = HEICMeta.neutralise(&meta, headerCount: metaHeaderCount, boxStart: metaStart)
        else {
            sink.write(meta)
            report.passedThrough = true
            state = .rest
            return
        }
        for name in outcome.names { report.note(name) }
        if outcome.unknownLength {
            report.refuse("heic: a metadata item runs to the end of the file", patchable: false)
        }
        let metaEnd = metaStart + Int64(meta.count)
        var later = ranges[nextRange...].filter { !$0.isEmpty }
        for range in outcome.fileRanges {
            if range.lowerBound < metaStart {
                let sent = range.lowerBound..<min(range.upperBound, metaStart)
                patchBytes += sent.count
                if patchBytes <= Self.patchLimit {
                    report.refuse("heic: metadata items were sent before their meta box", patchable: true)
                    report.patches.append((sent.lowerBound, [UInt8](repeating: 0, count: sent.count)))
                } else {
                    report.refuse(
                        "heic: metadata sent before its meta box is too large to patch", patchable: false)
                }
            }
            let low = max(range.lowerBound, metaStart)
            let high = min(range.upperBound, metaEnd)
            if low < high {
                for offset in low..<high { meta[Int(offset - metaStart)] = 0 }
            }
            if range.upperBound > metaEnd { later.append(max(range.lowerBound, metaEnd)..<range.upperBound) }
        }
        ranges = Self.merged(later)
        nextRange = 0
        sink.write(meta)
    }

    /// Passes `count` bytes, zeroing those inside `ranges`.
    private mutating func pass(_ count: Int, _ walk: inout ByteWalk, into sink: inout some ByteSink) {
        var left = count
        while left > 0 {
            let position = consumed + Int64(walk.index)
            while nextRange < ranges.count && ranges[nextRange].upperBound <= position { nextRange += 1 }
            guard nextRange < ranges.count else { return walk.keep(left) }
            let range = ranges[nextRange]
            if range.lowerBound > position {
                let piece = Int(min(Int64(left), range.lowerBound - position))
                walk.keep(piece)
                left -= piece
            } else {
                let piece = Int(min(Int64(left), range.upperBound - position))
                walk.zero(piece, into: &sink)
                left -= piece
            }
        }
    }

    /// `ranges` sorted, overlapping and touching ones joined.
    static func merged(_ ranges: [Range<Int64>]) -> [Range<Int64>] {
        var result: [Range<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, range.lowerBound <= last.upperBound {
                result[result.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }
}
