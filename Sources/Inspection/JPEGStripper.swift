import HTTPCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Strips a JPEG stream marker by marker (ITU T.81 §B): APP1 (EXIF, XMP, extended XMP and any
/// other APP1), APP13 (Photoshop/IPTC), COM and, without `keepICC`, APP2 ICC_PROFILE.
///
/// Blank mode turns such a segment into a COM segment (FF FE) of the same length with a zeroed
/// payload; with `keepOrientation` an EXIF APP1 is buffered whole (at most 65,537 bytes) and
/// rewritten in place to `MinimalExif` (no Orientation: blanked as above). Remove mode leaves
/// those segments out (an EXIF APP1 kept for its Orientation shrinks to 36 bytes). Every other
/// segment, the entropy-coded data after SOS (scanned with `memchr` for 0xFF; FF00 and RSTn are
/// data), the markers between progressive scans and further images after EOI (an MPF
/// secondary image starts right after it: FF D8) are walked the same way. Anything else after
/// EOI is a trailer and leaves unchanged; anything that is not a marker where one must be
/// makes the rest pass unchanged (`passedThrough`).
struct JPEGStripper: Sendable {
    enum State: Sendable {
        /// Expecting SOI (FF D8).
        case signature
        /// At a marker: FF, fill bytes, the code and, for a segment, its length. `inScan` when
        /// the marker ends entropy-coded data (FF00 and RSTn then continue the scan).
        case marker(inScan: Bool)
        /// Entropy-coded data after a SOS segment.
        case entropy
        /// Right after EOI: another image (FF D8) or a trailer.
        case afterEOI
        /// A segment's payload; `scan` when entropy-coded data follows (SOS).
        case payload(remaining: Int, action: PayloadAction, scan: Bool)
        /// An EXIF APP1 gathered whole in `segment` for its Orientation.
        case buffering(remaining: Int)
        /// Unchanged to the end: a trailer after EOI, or the rest of a malformed file.
        case rest
    }

    enum PayloadAction: Sendable {
        case pass, zero, drop
    }

    let mode: StripMode
    let keepOrientation: Bool
    let keepICC: Bool
    var state = State.signature
    var held = HeldUnit()
    /// The EXIF APP1 being gathered (`.buffering`), marker and length included.
    var segment: [UInt8] = []

    init(options: StripOptions) {
        mode = options.mode
        keepOrientation = options.keepOrientation
        keepICC = options.keepICC
    }

    /// Bytes held back: a partial marker, or the EXIF segment being gathered.
    var heldBytes: Int { held.bytes.count + segment.count }

    mutating func write(_ walk: inout ByteWalk, into sink: inout some ByteSink, report: inout StripReport) {
        while walk.available > 0 {
            switch state {
            case .signature:
                guard held.gather(2, from: &walk, into: &sink) else { return }
                guard held.byte(0, in: walk) == 0xFF, held.byte(1, in: walk) == 0xD8 else {
                    return malformed(&walk, into: &sink, report: &report)
                }
                held.keep(2, walk: &walk, into: &sink)
                state = .marker(inScan: false)
            case .marker(let inScan):
                readMarker(inScan: inScan, &walk, into: &sink, report: &report)
            case .entropy:
                scanEntropy(&walk)
            case .afterEOI:
                guard held.gather(2, from: &walk, into: &sink) else { return }
                if held.byte(0, in: walk) == 0xFF, held.byte(1, in: walk) == 0xD8 {
                    held.keep(2, walk: &walk, into: &sink)
                    state = .marker(inScan: false)
                } else {
                    held.passRest(walk: &walk, into: &sink)
                    state = .rest
                }
            case .payload(let remaining, let action, let scan):
                let count = min(remaining, walk.available)
                switch action {
                case .pass: walk.keep(count)
                case .zero: walk.zero(count, into: &sink)
                case .drop: walk.drop(count, into: &sink)
                }
                state =
                    count < remaining
                    ? .payload(remaining: remaining - count, action: action, scan: scan)
                    : scan ? .entropy : .marker(inScan: false)
            case .buffering(let remaining):
                let count = min(remaining, walk.available)
                segment.append(contentsOf: walk.next(count))
                walk.drop(count, into: &sink)
                if count < remaining {
                    state = .buffering(remaining: remaining - count)
                } else {
                    emitExif(into: &sink)
                    state = .marker(inScan: false)
                }
            case .rest:
                walk.keep(walk.available)
            }
        }
    }

    /// Ends the stream: what is held leaves unchanged (a truncated marker) or blanked (a
    /// metadata segment cut short inside its identifier, or a truncated EXIF segment: as a COM
    /// segment of the bytes received, nothing in remove mode).
    mutating func finish(into sink: inout some ByteSink, report: inout StripReport) {
        if case .buffering = state {
            if mode == .blank {
                segment[1] = 0xFE
                for index in 4..<segment.count { segment[index] = 0 }
                sink.write(segment)
            }
            segment = []
        } else if case .marker = state, held.bytes.count >= 4, [0xE1, 0xED, 0xFE].contains(held.bytes[1]) {
            // A metadata segment cut short inside its identifier: blanked like a whole one.
            if mode == .blank {
                held.bytes[1] = 0xFE
                for index in 4..<held.bytes.count { held.bytes[index] = 0 }
                held.emit(into: &sink)
            }
            held.discard()
        } else if held.isHeld {
            held.emit(into: &sink)
            if case .afterEOI = state {} else { report.passedThrough = true }
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

    /// Reads one marker (and a segment's length and identifier) and decides its fate.
    private mutating func readMarker(
        inScan: Bool, _ walk: inout ByteWalk, into sink: inout some ByteSink, report: inout StripReport
    ) {
        guard held.gather(2, from: &walk, into: &sink) else { return }
        let code = held.byte(1, in: walk)
        guard held.byte(0, in: walk) == 0xFF else { return malformed(&walk, into: &sink, report: &report) }
        if code == 0xFF {  // a fill byte
            held.keep(1, walk: &walk, into: &sink)
            return
        }
        if inScan && (code == 0x00 || code & 0xF8 == 0xD0) {
            held.keep(2, walk: &walk, into: &sink)
            state = .entropy
            return
        }
        switch code {
        case 0x00: return malformed(&walk, into: &sink, report: &report)
        case 0x01, 0xD0...0xD8:
            held.keep(2, walk: &walk, into: &sink)
            state = .marker(inScan: false)
            return
        case 0xD9:
            held.keep(2, walk: &walk, into: &sink)
            state = .afterEOI
            return
        default: break
        }
        guard held.gather(4, from: &walk, into: &sink) else { return }
        let length = Int(held.bigEndian(2, 2, in: walk))
        guard length >= 2 else { return malformed(&walk, into: &sink, report: &report) }
        let payload = length - 2
        let identifier = min(payload, code == 0xE1 ? 35 : code == 0xE2 && !keepICC ? 12 : 0)
        guard held.gather(4 + identifier, from: &walk, into: &sink) else { return }
        let name = strippedName(code: code, identifier: identifier, walk)
        let headerCount = 4 + identifier
        let remaining = payload - identifier
        guard let name else {
            held.keep(headerCount, walk: &walk, into: &sink)
            state = .payload(remaining: remaining, action: .pass, scan: code == 0xDA)
            return
        }
        report.note(name)
        if keepOrientation && name == "exif" && payload >= 6 + MinimalExif.tiffCount {
            held.take(headerCount, walk: &walk, into: &sink)
            swap(&segment, &held.bytes)
            held.discard()
            segment.reserveCapacity(length + 2)
            state = .buffering(remaining: remaining)
        } else if mode == .blank {
            held.take(headerCount, walk: &walk, into: &sink)
            held.bytes[1] = 0xFE
            for index in 4..<headerCount { held.bytes[index] = 0 }
            held.emit(into: &sink)
            state = .payload(remaining: remaining, action: .zero, scan: false)
        } else {
            held.drop(headerCount, walk: &walk, into: &sink)
            state = .payload(remaining: remaining, action: .drop, scan: false)
        }
        if case .buffering(0) = state {
            emitExif(into: &sink)
            state = .marker(inScan: false)
        }
    }

    /// The `stripped` name of a segment, or nil when it stays.
    private func strippedName(code: UInt8, identifier: Int, _ walk: ByteWalk) -> String? {
        switch code {
        case 0xE1:
            if identifier >= 6 && held.matches("Exif\0\0", at: 4, in: walk) { return "exif" }
            if identifier >= 29 && held.matches("http://ns.adobe.com/xap/1.0/\0", at: 4, in: walk) {
                return "xmp"
            }
            if identifier >= 35 && held.matches("http://ns.adobe.com/xmp/extension/\0", at: 4, in: walk) {
                return "xmp"
            }
            return "jpeg:APP1"
        case 0xE2:
            return identifier >= 12 && held.matches("ICC_PROFILE\0", at: 4, in: walk) ? "icc" : nil
        case 0xED: return "iptc"
        case 0xFE: return "comment"
        default: return nil
        }
    }

    /// Emits the gathered EXIF APP1 reduced to its Orientation (blanked or left out when it has
    /// none).
    private mutating func emitExif(into sink: inout some ByteSink) {
        defer { segment = [] }
        guard let found = MinimalExif.orientation(in: segment, tiffAt: 10) else {
            if mode == .blank {
                segment[1] = 0xFE
                for index in 4..<segment.count { segment[index] = 0 }
                sink.write(segment)
            }
            return
        }
        let end = mode == .blank ? segment.count : 10 + MinimalExif.tiffCount
        if mode == .remove {
            segment.removeSubrange(end...)
            segment[2] = 0
            segment[3] = UInt8(end - 2)
        }
        MinimalExif.write(
            into: &segment, at: 10, end: end, bigEndian: found.bigEndian, orientation: found.value)
        sink.write(segment)
    }

    /// Skips entropy-coded data up to the next marker (an FF that is not FF00, RSTn or at the
    /// very end of the input), leaving the walk at that FF.
    private mutating func scanEntropy(_ walk: inout ByteWalk) {
        let base = walk.bytes.baseAddress!
        let end = walk.bytes.count
        var index = walk.index
        while index < end {
            guard let found = memchr(base + index, 0xFF, end - index) else { break }
            let at = UnsafeRawPointer(found) - base
            if at + 1 < end {
                let next = walk.bytes[at + 1]
                if next == 0x00 || next & 0xF8 == 0xD0 {
                    index = at + 2
                    continue
                }
            }
            walk.index = at
            state = .marker(inScan: true)
            return
        }
        walk.index = end
    }
}
