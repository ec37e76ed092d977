/// The smallest valid EXIF that keeps one tag, Orientation: what an EXIF block is rewritten
/// to when `keepOrientation` is set.
///
/// Its TIFF stream is 26 bytes in the original byte order: the header (`II*\0` or `MM\0*`,
/// IFD0 at offset 8), IFD0 with the single entry 0x0112 SHORT 1 = the orientation, and a
/// next-IFD offset of 0.
enum MinimalExif {
    /// The bytes of the minimal TIFF stream.
    static let tiffCount = 26

    /// The Orientation (1...8) in IFD0 of the TIFF stream at `start` of `buffer`, and whether
    /// the stream is big-endian; nil when the stream is malformed or has no valid Orientation.
    /// Only IFD0 is read: thumbnails and sub-IFDs are never followed.
    static func orientation(in buffer: [UInt8], tiffAt start: Int) -> (bigEndian: Bool, value: UInt16)? {
        let end = buffer.count
        guard start >= 0, end - start >= 8 else { return nil }
        let bigEndian: Bool
        switch (buffer[start], buffer[start + 1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        func read(_ offset: Int, _ width: Int) -> Int? {
            guard offset >= 0, width <= end - start, offset <= end - start - width else { return nil }
            var value = 0
            for index in 0..<width {
                let byte = Int(buffer[start + offset + (bigEndian ? index : width - 1 - index)])
                value = value << 8 | byte
            }
            return value
        }
        guard read(2, 2) == 42, let ifd = read(4, 4), let entries = read(ifd, 2) else { return nil }
        for entry in 0..<entries {
            let at = ifd + 2 + entry * 12
            guard let tag = read(at, 2) else { return nil }
            guard tag == 0x0112 else { continue }
            guard read(at + 2, 2) == 3, read(at + 4, 4) == 1, let value = read(at + 8, 2),
                (1...8).contains(value)
            else { return nil }
            return (bigEndian, UInt16(value))
        }
        return nil
    }

    /// Writes the minimal TIFF stream at `start` of `buffer` and zeroes the rest of
    /// `start..<end`; `end - start` must be at least `tiffCount`.
    static func write(
        into buffer: inout [UInt8], at start: Int, end: Int, bigEndian: Bool, orientation: UInt16
    ) {
        func put16(_ value: UInt16) -> [UInt8] {
            bigEndian ? [UInt8(value >> 8), UInt8(value & 0xFF)] : [UInt8(value & 0xFF), UInt8(value >> 8)]
        }
        var tiff: [UInt8] =
            bigEndian ? [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8] : [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0]
        tiff += put16(1)  // one entry
        tiff += put16(0x0112) + put16(3) + (bigEndian ? [0, 0, 0, 1] : [1, 0, 0, 0])
        tiff += put16(orientation) + [0, 0]
        tiff += [0, 0, 0, 0]  // no next IFD
        for index in start..<end { buffer[index] = 0 }
        buffer.replaceSubrange(start..<(start + tiffCount), with: tiff)
    }
}
