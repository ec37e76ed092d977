import HTTPCore

/// Byte helpers for the synthetic images.
enum Bytes {
    static func be16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
    static func be32(_ value: Int) -> [UInt8] { be16(value >> 16) + be16(value) }
    static func le32(_ value: Int) -> [UInt8] { be32(value).reversed() }
    static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// Deterministic filler bytes without 0xFF (entropy-coded data, pixel data).
    static func filler(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return (0..<count).map { _ in UInt8(generator.next() % 255) }
    }

    /// CRC-32 (ISO-HDLC, as PNG uses it).
    static func crc32(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

/// A TIFF stream as EXIF carries it: IFD0 (Make, Orientation, a GPS IFD pointer), the GPS IFD
/// (latitude) and IFD1 pointing at a thumbnail.
enum TIFF {
    static func build(bigEndian: Bool = false, orientation: Int? = 6, thumbnail: [UInt8] = []) -> [UInt8] {
        func u16(_ value: Int) -> [UInt8] { bigEndian ? Bytes.be16(value) : Bytes.be16(value).reversed() }
        func u32(_ value: Int) -> [UInt8] { bigEndian ? Bytes.be32(value) : Bytes.le32(value) }
        func entry(_ tag: Int, _ type: Int, _ count: Int, _ value: [UInt8]) -> [UInt8] {
            u16(tag) + u16(type) + u32(count) + value + [UInt8](repeating: 0, count: 4 - value.count)
        }
        let make = Bytes.ascii("FormGateCam\0")
        let ifd0Count = orientation == nil ? 2 : 3
        let ifd0Size = 2 + 12 * ifd0Count + 4
        let makeOffset = 8 + ifd0Size
        let gpsOffset = makeOffset + make.count
        let gpsSize = 2 + 24 + 4
        let latitudeOffset = gpsOffset + gpsSize
        let ifd1Offset = latitudeOffset + 24
        let thumbnailOffset = ifd1Offset + 30
        var tiff: [UInt8] = bigEndian ? [0x4D, 0x4D, 0x00, 0x2A] : [0x49, 0x49, 0x2A, 0x00]
        tiff += u32(8) + u16(ifd0Count) + entry(0x010F, 2, make.count, u32(makeOffset))
        if let orientation { tiff += entry(0x0112, 3, 1, u16(orientation)) }
        tiff += entry(0x8825, 4, 1, u32(gpsOffset)) + u32(ifd1Offset) + make
        tiff += u16(2) + entry(1, 2, 2, Bytes.ascii("N\0")) + entry(2, 5, 3, u32(latitudeOffset)) + u32(0)
        for value in [52, 1, 30, 1, 1234, 100] { tiff += u32(value) }
        tiff += u16(2) + entry(0x0201, 4, 1, u32(thumbnailOffset)) + entry(0x0202, 4, 1, u32(thumbnail.count))
        tiff += u32(0) + thumbnail
        return tiff
    }
}

/// A JPEG built segment by segment, with what blank and remove mode must make of it.
struct SyntheticJPEG {
    var bytes: [UInt8] = []
    var blanked: [UInt8] = []
    var removed: [UInt8] = []

    static func segment(_ code: UInt8, _ payload: [UInt8]) -> [UInt8] {
        [0xFF, code] + Bytes.be16(payload.count + 2) + payload
    }

    /// Appends bytes that every mode keeps.
    mutating func keep(_ part: [UInt8]) {
        bytes += part
        blanked += part
        removed += part
    }

    /// Appends a segment that is stripped.
    mutating func strip(_ code: UInt8, _ payload: [UInt8]) {
        bytes += Self.segment(code, payload)
        blanked += [0xFF, 0xFE] + Bytes.be16(payload.count + 2) + [UInt8](repeating: 0, count: payload.count)
    }

    static let xmp = Bytes.ascii("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta><rdf:RDF/>GPS 52.5N</x:xmpmeta>")
    static let extendedXMP =
        Bytes.ascii("http://ns.adobe.com/xmp/extension/\0") + [UInt8](repeating: 0x41, count: 80)
    static let iptc = Bytes.ascii(
        "Photoshop 3.0\08BIM\u{04}\u{04}\0\0\0\0\0\u{0C}\u{1C}\u{02}\u{74}\0\u{07}Someone")
    static let icc = Bytes.ascii("ICC_PROFILE\0\u{01}\u{01}") + [UInt8](repeating: 0x33, count: 120)

    /// A small JPEG whose EXIF carries its own APP1 (a thumbnail with metadata of its own).
    static let thumbnail: [UInt8] =
        [0xFF, 0xD8] + segment(0xE1, Bytes.ascii("Exif\0\0") + TIFF.build(orientation: 3))
        + segment(0xDB, [UInt8](repeating: 1, count: 65)) + [0xFF, 0xD9]

    /// A baseline-looking JPEG: APP0, EXIF (GPS, thumbnail), XMP, extended XMP, APP13, COM,
    /// APP2 ICC, DQT, SOF0, DHT, SOS, `entropy` bytes of data with FF00 and RSTn, a COM and a
    /// second scan, EOI.
    static func make(entropy: Int = 600, bigEndianExif: Bool = false, seed: UInt64 = 1) -> SyntheticJPEG {
        var jpeg = SyntheticJPEG()
        jpeg.keep([0xFF, 0xD8])
        jpeg.keep(segment(0xE0, Bytes.ascii("JFIF\0\u{01}\u{01}\0\0\u{01}\0\u{01}\0\0")))
        jpeg.strip(0xE1, Bytes.ascii("Exif\0\0") + TIFF.build(bigEndian: bigEndianExif, thumbnail: thumbnail))
        jpeg.strip(0xE1, xmp)
        jpeg.strip(0xE1, extendedXMP)
        jpeg.strip(0xED, iptc)
        jpeg.strip(0xFE, Bytes.ascii("shot at home"))
        jpeg.keep(segment(0xE2, icc))
        jpeg.keep(segment(0xDB, [0] + [UInt8](repeating: 2, count: 64)))
        jpeg.keep(segment(0xC0, [8, 0, 16, 0, 16, 1, 1, 0x11, 0]))
        jpeg.keep(segment(0xC4, [0, 0, 1] + [UInt8](repeating: 0, count: 15) + [0]))
        jpeg.keep(segment(0xDA, [1, 1, 0, 0, 63, 0]))
        jpeg.keep(scan(entropy, seed: seed))
        jpeg.keep([0xFF, 0xFF])  // fill bytes before a marker
        jpeg.strip(0xFE, Bytes.ascii("between scans"))
        jpeg.keep(segment(0xDA, [1, 1, 0, 0, 63, 0]))
        jpeg.keep(scan(entropy / 2, seed: seed &+ 1))
        jpeg.keep([0xFF, 0xD9])
        return jpeg
    }

    /// Entropy-coded data: filler with FF00 stuffing and a RST marker every so often.
    static func scan(_ count: Int, seed: UInt64) -> [UInt8] {
        var data = Bytes.filler(count, seed: seed)
        var index = 97
        var restart: UInt8 = 0
        while index + 2 < data.count {
            if index % 3 == 0 {
                data[index] = 0xFF
                data[index + 1] = 0xD0 | restart
                restart = (restart + 1) & 7
            } else {
                data[index] = 0xFF
                data[index + 1] = 0
            }
            index += 997
        }
        return data
    }
}
