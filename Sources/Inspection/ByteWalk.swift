import HTTPCore

/// One `write` call's bytes as a stripper walks them: how far it has read, and where the run
/// of unchanged bytes that it has not yet handed to the sink begins.
///
/// Unchanged bytes are never copied: they accumulate in the run and leave as one slice of
/// the caller's buffer when something changed follows (`flush`) or the call ends.
struct ByteWalk {
    let bytes: UnsafeRawBufferPointer
    /// The next byte to read.
    var index = 0
    /// The first byte read but not yet emitted; always `<= index`.
    var runStart = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// Bytes not yet read.
    var available: Int { bytes.count - index }

    /// The byte `offset` past the next one.
    subscript(offset: Int) -> UInt8 { bytes[index + offset] }

    /// The next `count` bytes (which must be available).
    func next(_ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[index..<(index + count)])
    }

    /// Emits the run read so far.
    mutating func flush(into sink: inout some ByteSink) {
        if index > runStart {
            sink.write(UnsafeRawBufferPointer(rebasing: bytes[runStart..<index]))
        }
        runStart = index
    }

    /// Reads `count` bytes that leave unchanged (they join the run).
    mutating func keep(_ count: Int) {
        index += count
    }

    /// Reads `count` bytes that do not leave at all.
    mutating func drop(_ count: Int, into sink: inout some ByteSink) {
        flush(into: &sink)
        index += count
        runStart = index
    }

    /// Reads `count` bytes that leave as zeros.
    mutating func zero(_ count: Int, into sink: inout some ByteSink) {
        flush(into: &sink)
        Zeros.write(count, into: &sink)
        index += count
        runStart = index
    }
}

/// A page of zeros: what neutralised payloads are written from.
enum Zeros {
    static let page = [UInt8](repeating: 0, count: 16_384)

    /// Writes `count` zero bytes.
    static func write(_ count: Int, into sink: inout some ByteSink) {
        var left = count
        page.withUnsafeBytes { zeros in
            while left > 0 {
                let piece = min(left, zeros.count)
                sink.write(UnsafeRawBufferPointer(rebasing: zeros[..<piece]))
                left -= piece
            }
        }
    }
}
