import HTTPCore

/// The header a stripper must see whole before it decides (a JPEG marker and length, a PNG or
/// WebP chunk header, a box header), gathered across `write` calls when it straddles them.
///
/// While the unit lies inside the current input it is read there and never copied (`bytes`
/// stays empty and the walk has not moved past it). Only a unit that straddles two inputs, or
/// one the stripper edits (`take`), is copied into `bytes`; then the walk is past it and
/// `bytes` holds every byte of it read so far.
struct HeldUnit {
    /// The unit's bytes when it is held (empty while it is read in place).
    var bytes: [UInt8] = []

    /// Whether the unit's bytes are held rather than read in place.
    var isHeld: Bool { !bytes.isEmpty }

    /// Makes the unit's first `count` bytes readable with `byte(_:in:)`.
    ///
    /// - Returns: false when the input ended first (the bytes read so far are held; call
    ///   again with the next input).
    mutating func gather(_ count: Int, from walk: inout ByteWalk, into sink: inout some ByteSink) -> Bool {
        if bytes.isEmpty {
            if walk.available >= count { return true }
            walk.flush(into: &sink)
        }
        let take = min(count - bytes.count, walk.available)
        if take > 0 {
            bytes.append(contentsOf: walk.next(take))
            walk.index += take
            walk.runStart = walk.index
        }
        return bytes.count >= count
    }

    /// Byte `offset` of the unit (gathered).
    func byte(_ offset: Int, in walk: ByteWalk) -> UInt8 {
        bytes.isEmpty ? walk[offset] : bytes[offset]
    }

    /// A big-endian integer of `width` bytes at `offset` of the unit (gathered).
    func bigEndian(_ offset: Int, _ width: Int, in walk: ByteWalk) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + width) { value = value << 8 | UInt64(byte(index, in: walk)) }
        return value
    }

    /// A little-endian 32-bit integer at `offset` of the unit (gathered).
    func littleEndian32(_ offset: Int, in walk: ByteWalk) -> UInt32 {
        var value: UInt32 = 0
        for index in (offset..<(offset + 4)).reversed() { value = value << 8 | UInt32(byte(index, in: walk)) }
        return value
    }

    /// Whether the unit's bytes at `offset` are `literal` (which must be gathered).
    func matches(_ literal: StaticString, at offset: Int, in walk: ByteWalk) -> Bool {
        let count = literal.utf8CodeUnitCount
        for index in 0..<count where byte(offset + index, in: walk) != literal.utf8Start[index] {
            return false
        }
        return true
    }

    /// The first `count` bytes leave unchanged.
    mutating func keep(_ count: Int, walk: inout ByteWalk, into sink: inout some ByteSink) {
        if bytes.isEmpty {
            walk.keep(count)
        } else {
            bytes.withUnsafeBytes { sink.write(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            bytes.removeFirst(count)
        }
    }

    /// The first `count` bytes do not leave.
    mutating func drop(_ count: Int, walk: inout ByteWalk, into sink: inout some ByteSink) {
        if bytes.isEmpty {
            walk.drop(count, into: &sink)
        } else {
            bytes.removeFirst(count)
        }
    }

    /// Copies the unit's first `count` bytes into `bytes` (reading them), for the caller to
    /// edit and then `emit` or `discard`.
    mutating func take(_ count: Int, walk: inout ByteWalk, into sink: inout some ByteSink) {
        guard bytes.isEmpty else { return }
        walk.flush(into: &sink)
        bytes.append(contentsOf: walk.next(count))
        walk.index += count
        walk.runStart = walk.index
    }

    /// Writes the held bytes (as edited) and forgets them.
    mutating func emit(into sink: inout some ByteSink) {
        sink.write(bytes)
        bytes.removeAll(keepingCapacity: true)
    }

    /// Forgets the held bytes.
    mutating func discard() {
        bytes.removeAll(keepingCapacity: true)
    }
}

extension HeldUnit {
    /// Gives up on the structure: the held bytes and the rest of this input leave unchanged.
    mutating func passRest(walk: inout ByteWalk, into sink: inout some ByteSink) {
        if isHeld { emit(into: &sink) }
        walk.keep(walk.available)
    }
}
