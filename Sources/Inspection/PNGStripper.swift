import CZlib
import HTTPCore

/// Strips a PNG stream chunk by chunk (PNG §5.3: length, type, data, CRC): `eXIf`, `tEXt`,
/// `iTXt`, `zTXt`, `tIME` and, without `keepICC`, `iCCP`.
///
/// Blank mode renames such a chunk to `blNK` (ancillary, private, reserved bit clear, unsafe to
/// copy: a decoder skips it and an editor drops it), zeroes its data and writes the CRC of the
/// new type and the zeros (computed with zlib's `crc32` while the zeros stream out). Remove mode
/// leaves the chunk out. Only the 8-byte chunk header is ever held back. A bad signature, a
/// length over 2^31 - 1 or a type that is not four ASCII letters makes the rest pass
/// unchanged (`passedThrough`); everything after IEND is a trailer and leaves unchanged.
struct PNGStripper: Sendable {
    enum State: Sendable {
        case signature
        case chunkHeader
        /// A chunk's data; `crc` is the running CRC of a blanked chunk (nil: unchanged).
        case data(remaining: Int, action: JPEGStripper.PayloadAction, crc: UInt32?, last: Bool)
        /// A chunk's CRC; `replacement` is the blanked chunk's CRC (nil: unchanged).
        case crc(remaining: Int, action: JPEGStripper.PayloadAction, replacement: UInt32?, last: Bool)
        /// Unchanged to the end: after IEND, or the rest of a malformed file.
        case rest
    }

    /// The type a blanked chunk gets.
    static let blankType: [UInt8] = Array("blNK".utf8)
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    let mode: StripMode
    let keepICC: Bool
    var state = State.signature
    var held = HeldUnit()

    init(options: StripOptions) {
        mode = options.mode
        keepICC = options.keepICC
    }

    /// Bytes held back: at most a chunk header or the signature.
    var heldBytes: Int { held.bytes.count }

    mutating func write(_ walk: inout ByteWalk, into sink: inout some ByteSink, report: inout StripReport) {
        while walk.available > 0 {
            switch state {
            case .signature:
                guard held.gather(8, from: &walk, into: &sink) else { return }
                for index in 0..<8 where held.byte(index, in: walk) != Self.signature[index] {
                    return malformed(&walk, into: &sink, report: &report)
                }
                held.keep(8, walk: &walk, into: &sink)
                state = .chunkHeader
            case .chunkHeader:
                readChunkHeader(&walk, into: &sink, report: &report)
            case .data(let remaining, let action, var crc, let last):
                let count = min(remaining, walk.available)
                switch action {
                case .pass: walk.keep(count)
                case .drop: walk.drop(count, into: &sink)
                case .zero:
                    walk.zero(count, into: &sink)
                    crc = Self.crcOfZeros(count, continuing: crc ?? 0)
                }
                state =
                    count < remaining
                    ? .data(remaining: remaining - count, action: action, crc: crc, last: last)
                    : .crc(remaining: 4, action: action, replacement: crc, last: last)
            case .crc(let remaining, let action, let replacement, let last):
                let count = min(remaining, walk.available)
                if let replacement {
                    walk.flush(into: &sink)
                    let bytes = (0..<4).map { UInt8(truncatingIfNeeded: replacement >> (24 - 8 * $0)) }
                    sink.write(bytes[(4 - remaining)..<(4 - remaining + count)])
                    walk.index += count
                    walk.runStart = walk.index
                } else if action == .drop {
                    walk.drop(count, into: &sink)
                } else {
                    walk.keep(count)
                }
                state =
                    count < remaining
                    ? .crc(remaining: remaining - count, action: action, replacement: replacement, last: last)
                    : last ? .rest : .chunkHeader
            case .rest:
                walk.keep(walk.available)
            }
        }
    }

    /// Ends the stream: a held partial header leaves unchanged.
    mutating func finish(into sink: inout some ByteSink, report: inout StripReport) {
        if held.isHeld {
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

    private mutating func readChunkHeader(
        _ walk: inout ByteWalk, into sink: inout some ByteSink, report: inout StripReport
    ) {
        guard held.gather(8, from: &walk, into: &sink) else { return }
        let length = held.bigEndian(0, 4, in: walk)
        guard length <= 0x7FFF_FFFF else { return malformed(&walk, into: &sink, report: &report) }
        for index in 4..<8 {
            let byte = held.byte(index, in: walk) | 0x20
            guard (0x61...0x7A).contains(byte) else { return malformed(&walk, into: &sink, report: &report) }
        }
        let type = UInt32(held.bigEndian(4, 4, in: walk))
        let last = type == FourCC.of("IEND")
        let stripped: Bool
        switch type {
        case FourCC.of("eXIf"), FourCC.of("tEXt"), FourCC.of("iTXt"), FourCC.of("zTXt"), FourCC.of("tIME"):
            stripped = true
        case FourCC.of("iCCP"): stripped = !keepICC
        default: stripped = false
        }
        guard stripped else {
            held.keep(8, walk: &walk, into: &sink)
            state = .data(remaining: Int(length), action: .pass, crc: nil, last: last)
            return
        }
        report.note("png:" + FourCC.string(type))
        if mode == .blank {
            held.take(8, walk: &walk, into: &sink)
            held.bytes.replaceSubrange(4..<8, with: Self.blankType)
            held.emit(into: &sink)
            let crc = Self.blankType.withUnsafeBufferPointer { UInt32(crc32(0, $0.baseAddress, 4)) }
            state = .data(remaining: Int(length), action: .zero, crc: crc, last: false)
        } else {
            held.drop(8, walk: &walk, into: &sink)
            state = .data(remaining: Int(length), action: .drop, crc: nil, last: false)
        }
    }

    /// The CRC `crc` continued over `count` zero bytes.
    static func crcOfZeros(_ count: Int, continuing crc: UInt32) -> UInt32 {
        var value = UInt(crc)
        var left = count
        Zeros.page.withUnsafeBufferPointer { zeros in
            while left > 0 {
                let piece = min(left, zeros.count)
                value = crc32(value, zeros.baseAddress, UInt32(piece))
                left -= piece
            }
        }
        return UInt32(truncatingIfNeeded: value)
    }
}
