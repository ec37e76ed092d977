import HTTPCore
import Inspection
import Testing

@Suite struct WebPStripperTests {
    let webp = SyntheticWebP.make()

    @Test func blankModeTurnsMetadataIntoJunkAndClearsFlags() {
        let run = strip(webp.bytes, .webp)
        #expect(run.output == webp.blanked)
        #expect(run.stripper.stripped == ["webp:EXIF", "webp:XMP"])
        #expect(run.stripper.patches.isEmpty && run.stripper.unstrippable == nil)
    }

    @Test func removeModeDropsChunksAndPatchesTheRIFFSize() {
        let run = strip(webp.bytes, .webp, StripOptions(mode: .remove))
        #expect(run.stripper.unstrippable != nil && run.stripper.patchesComplete)
        #expect(run.stripper.patches.map(\.offset) == [4])
        #expect(Array(run.output[4..<8]) == Array(webp.bytes[4..<8]))
        #expect(run.patched == webp.removed)
    }

    @Test func keepOrientationRewritesTheExifChunk() {
        let run = strip(webp.bytes, .webp, StripOptions(keepOrientation: true))
        #expect(run.output.count == webp.bytes.count)
        #expect(run.output[20] == 0x28)  // ICC and EXIF flags
        let exifAt = (0..<webp.bytes.count).first { Array(webp.bytes[$0..<($0 + 4)]) == Bytes.ascii("EXIF") }!
        #expect(Array(run.output[exifAt..<(exifAt + 4)]) == Bytes.ascii("EXIF"))
        let tiff: [UInt8] = [
            0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0,
        ]
        #expect(Array(run.output[(exifAt + 8)..<(exifAt + 34)]) == tiff)
        #expect(run.stripper.patches.isEmpty)

        let removed = strip(webp.bytes, .webp, StripOptions(mode: .remove, keepOrientation: true))
        #expect(Array(removed.patched[exifAt...]) == Bytes.ascii("EXIF") + Bytes.le32(26) + tiff)
        let size = removed.patched[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) }
        #expect(size == removed.patched.count - 8)
    }

    @Test func iccGoesWithoutKeepICC() {
        let run = strip(webp.bytes, .webp, StripOptions(keepICC: false))
        #expect(run.output[20] == 0)
        #expect(Array(run.output[30..<34]) == Bytes.ascii("JUNK"))
        #expect(run.stripper.stripped == ["webp:ICCP", "webp:EXIF", "webp:XMP"])
    }

    @Test(arguments: [0, 4, 0xFFFF_FFFF]) func aLyingRIFFSizeHidesNothing(size: Int) {
        var bytes = webp.bytes
        bytes.replaceSubrange(4..<8, with: Bytes.le32(size))
        var expected = webp.blanked
        expected.replaceSubrange(4..<8, with: Bytes.le32(size))
        #expect(strip(bytes, .webp).output == expected)
    }

    @Test func notRIFFPassesThrough() {
        let bytes = Bytes.ascii("RIFX....WEBPVP8 ")
        let run = strip(bytes, .webp)
        #expect(run.output == bytes && run.stripper.passedThrough)
    }
}
