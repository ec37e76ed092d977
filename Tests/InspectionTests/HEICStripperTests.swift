import HTTPCore
import Inspection
import Testing

@Suite struct HEICStripperTests {
    @Test(arguments: [StripMode.blank, .remove]) func metaBeforeMdatIsStrippedInTheStream(mode: StripMode) {
        let heic = SyntheticHEIC.make()
        let run = strip(heic.bytes, .heic, StripOptions(mode: mode))
        #expect(run.output == heic.blanked)
        #expect(run.stripper.stripped == ["heic:Exif", "heic:XMP"])
        #expect(
            run.stripper.unstrippable == nil && run.stripper.patches.isEmpty && !run.stripper.passedThrough)
    }

    @Test func metaAfterMdatIsUnstrippableWithPatches() {
        let heic = SyntheticHEIC.make(metaFirst: false)
        let run = strip(heic.bytes, .heic)
        var expected = heic.blanked
        expected.replaceSubrange(heic.exifRange, with: heic.bytes[heic.exifRange])
        #expect(run.output == expected)
        #expect(run.stripper.unstrippable != nil && run.stripper.patchesComplete)
        #expect(run.stripper.patches.map(\.offset) == [Int64(heic.exifRange.lowerBound)])
        #expect(run.patched == heic.blanked)
    }

    @Test func anOversizedMetaPassesThrough() {
        let ftyp = SyntheticHEIC.box("ftyp", Bytes.ascii("heic\0\0\0\0mif1"))
        let bytes = ftyp + Bytes.be32((1 << 20) + 1) + Bytes.ascii("meta") + [0, 0, 0, 0]
        let run = strip(bytes, .heic)
        #expect(run.output == bytes && run.stripper.passedThrough)
    }

    @Test func aMalformedMetaLeavesUnchanged() {
        let ftyp = SyntheticHEIC.box("ftyp", Bytes.ascii("heic\0\0\0\0mif1"))
        let meta = SyntheticHEIC.fullBox("meta", version: 0, Bytes.be32(100) + Bytes.ascii("iinf"))
        let bytes = ftyp + meta + SyntheticHEIC.box("mdat", [1, 2, 3])
        let run = strip(bytes, .heic)
        #expect(run.output == bytes && run.stripper.passedThrough)
    }

    /// A meta box too short for its version and flags (8 to 11 bytes, or 16 to 19 with a
    /// 64-bit size): once a trap in the stripper (FuzzStrip, Fuzz/Regressions/FuzzStrip).
    @Test(arguments: [8, 9, 11, 16, 19]) func aMetaBoxShorterThanAFullBoxHeaderPassesThrough(size: Int) {
        let ftyp = SyntheticHEIC.box("ftyp", Bytes.ascii("heic\0\0\0\0mif1"))
        let header =
            size < 16
            ? Bytes.be32(size) + Bytes.ascii("meta")
            : Bytes.be32(1) + Bytes.ascii("meta") + Bytes.be32(0) + Bytes.be32(size)
        let meta = header + [UInt8](repeating: 7, count: size - header.count)
        let bytes = ftyp + meta + SyntheticHEIC.box("mdat", [1, 2, 3])
        for mode in [StripMode.blank, .remove] {
            let run = strip(bytes, .heic, StripOptions(mode: mode))
            #expect(run.output == bytes && run.stripper.passedThrough)
        }
    }

    @Test func aFileNotStartingWithFtypPassesThrough() {
        let bytes = SyntheticHEIC.box("mdat", [1, 2, 3])
        let run = strip(bytes, .heic)
        #expect(run.output == bytes && run.stripper.passedThrough)
    }

    @Test func largeSizeBoxesAreRead() {
        let heic = SyntheticHEIC.make()
        // Insert a 64-bit-size `free` box after ftyp: offsets in iloc move by its 20 bytes, so
        // the Exif data moves out of the range: only meta's own edits are then checked.
        let free = Bytes.be32(1) + Bytes.ascii("free") + [0, 0, 0, 0] + Bytes.be32(20) + [1, 2, 3, 4]
        let bytes = Array(heic.bytes[..<24]) + free + Array(heic.bytes[24...])
        let run = strip(bytes, .heic)
        #expect(run.output.count == bytes.count)
        #expect(run.stripper.stripped == ["heic:Exif", "heic:XMP"] && !run.stripper.passedThrough)
    }
}
