/// A PNG built chunk by chunk, with what blank and remove mode must make of it.
struct SyntheticPNG {
    var bytes: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    var blanked: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
    var removed: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Bytes.ascii(type) + data
        return Bytes.be32(data.count) + typed + Bytes.be32(Int(Bytes.crc32(typed)))
    }

    mutating func keep(_ type: String, _ data: [UInt8]) {
        let chunk = Self.chunk(type, data)
        bytes += chunk
        blanked += chunk
        removed += chunk
    }

    mutating func strip(_ type: String, _ data: [UInt8]) {
        bytes += Self.chunk(type, data)
        blanked += Self.chunk("blNK", [UInt8](repeating: 0, count: data.count))
    }

    /// IHDR, the five metadata chunks, iCCP, IDAT chunks of `idat` bytes in all, IEND.
    static func make(idat: Int = 300, stripICC: Bool = false) -> SyntheticPNG {
        var png = SyntheticPNG()
        png.keep("IHDR", Bytes.be32(16) + Bytes.be32(16) + [8, 2, 0, 0, 0])
        png.strip("tEXt", Bytes.ascii("Comment\0taken at 52.5N"))
        png.strip("iTXt", Bytes.ascii("XML:com.adobe.xmp\0\0\0\0\0<x:xmpmeta>GPS</x:xmpmeta>"))
        png.strip("zTXt", Bytes.ascii("Author\0\0") + [0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01])
        png.strip("tIME", [0x07, 0xE8, 1, 2, 3, 4, 5])
        png.strip("eXIf", TIFF.build())
        if stripICC {
            png.strip("iCCP", Bytes.ascii("sRGB\0\0") + Bytes.filler(40, seed: 3))
        } else {
            png.keep("iCCP", Bytes.ascii("sRGB\0\0") + Bytes.filler(40, seed: 3))
        }
        var left = idat
        var seed: UInt64 = 10
        while left > 0 {
            let piece = min(left, 8192)
            png.keep("IDAT", Bytes.filler(piece, seed: seed))
            left -= piece
            seed += 1
        }
        png.keep("IEND", [])
        return png
    }
}

/// A WebP (VP8X, ICCP, VP8, EXIF, XMP) with what blank and remove mode must make of it.
struct SyntheticWebP {
    var bytes: [UInt8] = []
    var blanked: [UInt8] = []
    var removed: [UInt8] = []

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        Bytes.ascii(type) + Bytes.le32(data.count) + data + (data.count % 2 == 1 ? [0] : [])
    }

    static func riff(_ body: [UInt8]) -> [UInt8] {
        Bytes.ascii("RIFF") + Bytes.le32(body.count + 4) + Bytes.ascii("WEBP") + body
    }

    static let exif = TIFF.build()
    static let xmp = Bytes.ascii("<x:xmpmeta>GPS 52.5N</x:xmpmeta>")  // odd: padded

    /// `vp8` bytes of image data; flags ICC, EXIF and XMP set.
    static func make(vp8: Int = 200) -> SyntheticWebP {
        let icc = chunk("ICCP", Bytes.filler(30, seed: 4))
        let image = chunk("VP8 ", Bytes.filler(vp8, seed: 5))
        func vp8x(_ flags: UInt8) -> [UInt8] { chunk("VP8X", [flags, 0, 0, 0, 15, 0, 0, 15, 0, 0]) }
        let exifChunk = chunk("EXIF", exif)
        let xmpChunk = chunk("XMP ", xmp)
        var webp = SyntheticWebP()
        webp.bytes = riff(vp8x(0x2C) + icc + image + exifChunk + xmpChunk)
        webp.blanked = riff(
            vp8x(0x20) + icc + image + chunk("JUNK", [UInt8](repeating: 0, count: exif.count))
                + chunk("JUNK", [UInt8](repeating: 0, count: xmp.count)))
        webp.removed = riff(vp8x(0x20) + icc + image)
        return webp
    }
}

/// An ISO BMFF HEIC: ftyp, meta (hdlr, pitm, iinf with an hvc1, an Exif and an XMP item,
/// iloc, idat holding the XMP) and mdat (the image and the Exif), meta before or after mdat.
struct SyntheticHEIC {
    var bytes: [UInt8] = []
    /// Where the Exif and XMP item types are, and the items' data.
    var typeOffsets: [Int] = []
    var exifRange: Range<Int> = 0..<0
    var xmpRange: Range<Int> = 0..<0

    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        Bytes.be32(payload.count + 8) + Bytes.ascii(type) + payload
    }

    static func fullBox(_ type: String, version: UInt8, _ payload: [UInt8]) -> [UInt8] {
        box(type, [version, 0, 0, 0] + payload)
    }

    static let exif = [0, 0, 0, 6] + Bytes.ascii("Exif\0\0") + TIFF.build()
    static let xmp = Bytes.ascii("<x:xmpmeta>GPS 52.5N</x:xmpmeta>")

    /// The whole file; `imageBytes` of image data in mdat.
    static func make(metaFirst: Bool = true, imageBytes: Int = 100) -> SyntheticHEIC {
        let ftyp = box("ftyp", Bytes.ascii("heic\0\0\0\0mif1heic"))
        let image = Bytes.filler(imageBytes, seed: 6)
        let mdat = box("mdat", image + exif)
        func meta(mdatStart: Int) -> [UInt8] {
            let hdlr = fullBox(
                "hdlr", version: 0, [0, 0, 0, 0] + Bytes.ascii("pict") + [UInt8](repeating: 0, count: 13))
            let pitm = fullBox("pitm", version: 0, [0, 1])
            let infe1 = fullBox("infe", version: 2, [0, 1, 0, 0] + Bytes.ascii("hvc1") + [0])
            let infe2 = fullBox("infe", version: 2, [0, 2, 0, 0] + Bytes.ascii("Exif") + [0])
            let infe3 = fullBox(
                "infe", version: 2,
                [0, 3, 0, 0] + Bytes.ascii("mime") + [0] + Bytes.ascii("application/rdf+xml\0"))
            let iinf = fullBox("iinf", version: 0, [0, 3] + infe1 + infe2 + infe3)
            let payload = mdatStart + 8
            var items: [UInt8] = [0x44, 0x00, 0, 3]
            items += [0, 1, 0, 0, 0, 0, 0, 1] + Bytes.be32(payload) + Bytes.be32(image.count)
            items += [0, 2, 0, 0, 0, 0, 0, 1] + Bytes.be32(payload + image.count) + Bytes.be32(exif.count)
            items += [0, 3, 0, 1, 0, 0, 0, 1] + Bytes.be32(2) + Bytes.be32(xmp.count)
            let iloc = fullBox("iloc", version: 1, items)
            let idat = box("idat", [9, 9] + xmp + [9])
            return fullBox("meta", version: 0, hdlr + pitm + iinf + iloc + idat)
        }
        var heic = SyntheticHEIC()
        let metaSize = meta(mdatStart: 0).count
        let metaStart = metaFirst ? ftyp.count : ftyp.count + mdat.count
        let mdatStart = metaFirst ? ftyp.count + metaSize : ftyp.count
        let metaBox = meta(mdatStart: mdatStart)
        heic.bytes = metaFirst ? ftyp + metaBox + mdat : ftyp + mdat + metaBox
        for type in ["Exif", "mime"] {
            let needle = Bytes.ascii(type)
            let at = (metaStart..<(metaStart + metaSize - 4)).first {
                Array(heic.bytes[$0..<($0 + 4)]) == needle && heic.bytes[$0 - 8] == 2
            }!
            heic.typeOffsets.append(at)
        }
        heic.exifRange = (mdatStart + 8 + image.count)..<(mdatStart + 8 + image.count + exif.count)
        let xmpStart = metaStart + metaSize - 1 - xmp.count
        heic.xmpRange = xmpStart..<(xmpStart + xmp.count)
        return heic
    }

    /// What blank mode must make of it (all of it: in meta-after-mdat files, after patches).
    var blanked: [UInt8] {
        var result = bytes
        for at in typeOffsets { result.replaceSubrange(at..<(at + 4), with: Bytes.ascii("blnk")) }
        for range in [exifRange, xmpRange] {
            result.replaceSubrange(range, with: [UInt8](repeating: 0, count: range.count))
        }
        return result
    }
}
