/// Finds the Exif and XMP items of a buffered ISO BMFF `meta` box (ISO/IEC 14496-12 §8.11,
/// ISO/IEC 23008-12) and neutralises them: their `infe` item type becomes `blnk` (a type no
/// reader knows, so the item is ignored) and their data inside the box (`idat`, construction
/// method 1) is zeroed. Their data elsewhere in the file (construction method 0) is returned
/// as absolute file ranges for the caller to zero.
///
/// Read: `iinf` (versions 0 and 1) with `infe` versions 2 and 3 (item type `Exif`, or `mime`
/// with, after the item name, content type `application/rdf+xml`: XMP; versions 0 and 1 carry no item type and are
/// skipped), `iloc` versions 0 to 2 (offset, length, base offset and index sizes of 0, 4 or
/// 8 bytes). Every read is bounds-checked; a structure that does not fit makes the box
/// malformed (nil), never a trap.
enum HEICMeta {
    /// The type a neutralised item gets.
    static let blankType = FourCC.of("blnk")

    struct Outcome {
        /// Absolute file ranges of the items' data (construction method 0, this file).
        var fileRanges: [Range<Int64>] = []
        /// `heic:Exif`, `heic:XMP`, in order of appearance.
        var names: [String] = []
        /// An item extent of length 0 ("to the end"), which is not zeroed.
        var unknownLength = false
    }

    struct Child {
        let type: UInt32
        /// The payload (after the box header), to the end of the box.
        let payload: Range<Int>
    }

    /// Neutralises the `meta` box in `box` (whole, its header `headerCount` bytes long) that
    /// starts at file offset `boxStart`; nil when it is malformed (then `box` is unchanged).
    static func neutralise(_ box: inout [UInt8], headerCount: Int, boxStart: Int64) -> Outcome? {
        // A full box: version and flags follow the header. A box too short to hold them is
        // malformed (a range from past its end would trap).
        guard box.count >= headerCount + 4 else { return nil }
        guard let children = children(of: box, in: (headerCount + 4)..<box.count) else { return nil }
        var outcome = Outcome()
        guard let iinf = children.first(where: { $0.type == FourCC.of("iinf") }) else { return outcome }
        guard let items = items(of: box, in: iinf) else { return nil }
        guard !items.isEmpty else { return outcome }
        var edits: [Range<Int>] = []
        if let iloc = children.first(where: { $0.type == FourCC.of("iloc") }) {
            guard let locations = locations(of: box, in: iloc, ids: Set(items.map(\.id))) else { return nil }
            let idat = children.first(where: { $0.type == FourCC.of("idat") })?.payload
            for location in locations {
                for extent in location.extents {
                    let (start, overflow) = location.base.addingReportingOverflow(extent.offset)
                    guard !overflow else { return nil }
                    if location.construction == 0 && location.dataReference == 0 {
                        guard extent.length > 0 else {
                            outcome.unknownLength = true
                            continue
                        }
                        let end = start.addingReportingOverflow(extent.length)
                        guard !end.overflow, end.partialValue <= UInt64(Int64.max) else { return nil }
                        outcome.fileRanges.append(Int64(start)..<Int64(end.partialValue))
                    } else if location.construction == 1, let idat {
                        guard start < UInt64(idat.count) else { continue }
                        let from = idat.lowerBound + Int(start)
                        let room = UInt64(idat.upperBound - from)
                        let count = extent.length == 0 ? room : min(extent.length, room)
                        edits.append(from..<(from + Int(count)))
                    }
                }
            }
        }
        for item in items {
            box.replaceSubrange(item.typeOffset..<(item.typeOffset + 4), with: FourCC.bytes(blankType))
            if !outcome.names.contains(item.name) { outcome.names.append(item.name) }
        }
        for edit in edits { box.replaceSubrange(edit, with: repeatElement(0, count: edit.count)) }
        return outcome
    }

    /// The boxes directly inside `range`; nil when one does not fit.
    static func children(of box: [UInt8], in range: Range<Int>) -> [Child]? {
        var children: [Child] = []
        var at = range.lowerBound
        while at < range.upperBound {
            guard let size32 = read(box, at, 4, limit: range.upperBound),
                let type = read(box, at + 4, 4, limit: range.upperBound)
            else { return nil }
            var header = 8
            var size = size32
            if size32 == 1 {
                guard let large = read(box, at + 8, 8, limit: range.upperBound) else { return nil }
                header = 16
                size = large
            } else if size32 == 0 {
                size = UInt64(range.upperBound - at)
            }
            guard size >= UInt64(header), size <= UInt64(range.upperBound - at) else { return nil }
            children.append(Child(type: UInt32(type), payload: (at + header)..<(at + Int(size))))
            at += Int(size)
        }
        return children
    }

    /// A big-endian integer of `width` bytes at `at`, when it ends by `limit`.
    static func read(_ box: [UInt8], _ at: Int, _ width: Int, limit: Int) -> UInt64? {
        guard at >= 0, width >= 0, at <= limit - width, limit <= box.count else { return nil }
        var value: UInt64 = 0
        for index in at..<(at + width) { value = value << 8 | UInt64(box[index]) }
        return value
    }

    /// The Exif and XMP items of `iinf`: id, name and where their item type is.
    static func items(of box: [UInt8], in iinf: Child) -> [(id: UInt32, name: String, typeOffset: Int)]? {
        let end = iinf.payload.upperBound
        guard let version = read(box, iinf.payload.lowerBound, 1, limit: end) else { return nil }
        let first = iinf.payload.lowerBound + 4 + (version == 0 ? 2 : 4)
        guard first <= end, let entries = children(of: box, in: first..<end) else { return nil }
        var items: [(id: UInt32, name: String, typeOffset: Int)] = []
        for infe in entries where infe.type == FourCC.of("infe") {
            let at = infe.payload.lowerBound
            let limit = infe.payload.upperBound
            guard let version = read(box, at, 1, limit: limit) else { return nil }
            guard version == 2 || version == 3 else { continue }
            let idWidth = version == 2 ? 2 : 4
            let typeOffset = at + 4 + idWidth + 2
            guard let id = read(box, at + 4, idWidth, limit: limit),
                let type = read(box, typeOffset, 4, limit: limit)
            else { return nil }
            if type == FourCC.of("Exif") {
                items.append((UInt32(id), "heic:Exif", typeOffset))
            } else if type == FourCC.of("mime") {
                // item_name, then content_type, both null-terminated.
                let afterName = box[(typeOffset + 4)..<limit].drop { $0 != 0 }.dropFirst()
                if afterName.prefix(while: { $0 != 0 }).elementsEqual("application/rdf+xml".utf8) {
                    items.append((UInt32(id), "heic:XMP", typeOffset))
                }
            }
        }
        return items
    }

    struct Location {
        var construction: UInt64
        var dataReference: UInt64
        var base: UInt64
        var extents: [(offset: UInt64, length: UInt64)] = []
    }

    /// The locations of the items `ids` in `iloc`; nil when it is malformed.
    static func locations(of box: [UInt8], in iloc: Child, ids: Set<UInt32>) -> [Location]? {
        let limit = iloc.payload.upperBound
        var at = iloc.payload.lowerBound
        guard let version = read(box, at, 1, limit: limit), version <= 2,
            let sizes = read(box, at + 4, 2, limit: limit)
        else { return nil }
        let offsetSize = Int(sizes >> 12)
        let lengthSize = Int(sizes >> 8 & 0xF)
        let baseSize = Int(sizes >> 4 & 0xF)
        let indexSize = version == 0 ? 0 : Int(sizes & 0xF)
        let valid: Set = [0, 4, 8]
        guard valid.contains(offsetSize), valid.contains(lengthSize), valid.contains(baseSize),
            valid.contains(indexSize)
        else { return nil }
        let countWidth = version < 2 ? 2 : 4
        guard let count = read(box, at + 6, countWidth, limit: limit) else { return nil }
        at += 6 + countWidth
        var locations: [Location] = []
        for _ in 0..<count {
            guard let id = read(box, at, countWidth, limit: limit) else { return nil }
            at += countWidth
            var construction: UInt64 = 0
            if version > 0 {
                guard let field = read(box, at, 2, limit: limit) else { return nil }
                construction = field & 0xF
                at += 2
            }
            guard let reference = read(box, at, 2, limit: limit),
                let base = read(box, at + 2, baseSize, limit: limit),
                let extents = read(box, at + 2 + baseSize, 2, limit: limit)
            else { return nil }
            at += 4 + baseSize
            var location = Location(construction: construction, dataReference: reference, base: base)
            for _ in 0..<extents {
                guard let offset = read(box, at + indexSize, offsetSize, limit: limit),
                    let length = read(box, at + indexSize + offsetSize, lengthSize, limit: limit)
                else { return nil }
                at += indexSize + offsetSize + lengthSize
                location.extents.append((offset, length))
            }
            if ids.contains(UInt32(truncatingIfNeeded: id)) { locations.append(location) }
        }
        return locations
    }
}
