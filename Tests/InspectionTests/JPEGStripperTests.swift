import HTTPCore
import Inspection
import Testing

@Suite struct JPEGStripperTests {
    let jpeg = SyntheticJPEG.make()

    @Test func blankModeTurnsMetadataSegmentsIntoZeroedComments() {
        let run = strip(jpeg.bytes, .jpeg)
        #expect(run.output == jpeg.blanked)
        #expect(run.output.count == jpeg.bytes.count)
        #expect(run.stripper.stripped == ["exif", "xmp", "iptc", "comment"])
        #expect(
            !run.stripper.passedThrough && run.stripper.unstrippable == nil && run.stripper.patches.isEmpty)
        #expect(run.stripper.heldBytes == 0)
    }

    @Test func removeModeLeavesMetadataSegmentsOut() {
        let run = strip(jpeg.bytes, .jpeg, StripOptions(mode: .remove))
        #expect(run.output == jpeg.removed)
        #expect(run.stripper.unstrippable == nil)
    }

    @Test func iccProfileGoesWithoutKeepICC() {
        let run = strip(jpeg.bytes, .jpeg, StripOptions(keepICC: false))
        #expect(run.output.count == jpeg.bytes.count)
        #expect(run.stripper.stripped == ["exif", "xmp", "iptc", "comment", "icc"])
        #expect(!run.output.contains(Bytes.ascii("ICC_PROFILE")))
        #expect(run.output.contains([0xFF, 0xE0]))  // APP0 stays
    }

    @Test(arguments: [false, true]) func keepOrientationRewritesExifInPlace(bigEndian: Bool) {
        let file = SyntheticJPEG.make(bigEndianExif: bigEndian)
        let run = strip(file.bytes, .jpeg, StripOptions(keepOrientation: true))
        #expect(run.output.count == file.bytes.count)
        // APP0 is 18 bytes after SOI; the EXIF APP1 follows with its length unchanged.
        let length = Int(file.bytes[22]) << 8 | Int(file.bytes[23])
        let segment = Array(run.output[20..<(22 + length)])
        #expect(Array(segment[0..<4]) == Array(file.bytes[20..<24]))
        let tiff: [UInt8] =
            bigEndian
            ? [0x4D, 0x4D, 0, 0x2A, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0, 0, 0, 0, 0]
            : [0x49, 0x49, 0x2A, 0, 8, 0, 0, 0, 1, 0, 0x12, 0x01, 3, 0, 1, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0]
        #expect(Array(segment[4..<36]) == Bytes.ascii("Exif\0\0") + tiff)
        #expect(segment[36...].allSatisfy { $0 == 0 })
        #expect(Array(run.output[(22 + length)...]) == Array(file.blanked[(22 + length)...]))
        #expect(run.stripper.stripped.first == "exif")

        let removed = strip(file.bytes, .jpeg, StripOptions(mode: .remove, keepOrientation: true))
        #expect(Array(removed.output[20..<56]) == [0xFF, 0xE1, 0, 34] + Bytes.ascii("Exif\0\0") + tiff)
        #expect(Array(removed.output[56...]) == Array(file.removed[20...]))
    }

    @Test func exifWithoutOrientationIsBlankedUnderKeepOrientation() {
        var file = SyntheticJPEG()
        file.keep([0xFF, 0xD8])
        file.strip(0xE1, Bytes.ascii("Exif\0\0") + TIFF.build(orientation: nil))
        file.keep([0xFF, 0xD9])
        #expect(strip(file.bytes, .jpeg, StripOptions(keepOrientation: true)).output == file.blanked)
    }

    @Test func secondaryImagesAreStrippedAndTrailersKept() {
        let twice = strip(jpeg.bytes + jpeg.bytes, .jpeg)
        #expect(twice.output == jpeg.blanked + jpeg.blanked)
        let trailer = Bytes.ascii("TRAILER: not a marker")
        let run = strip(jpeg.bytes + trailer, .jpeg)
        #expect(run.output == jpeg.blanked + trailer)
        #expect(!run.stripper.passedThrough)
    }

    @Test func notAJPEGPassesThrough() {
        let bytes = Bytes.ascii("GIF89a and some more")
        let run = strip(bytes, .jpeg)
        #expect(run.output == bytes)
        #expect(run.stripper.passedThrough)
    }

    @Test func garbageBetweenSegmentsPassesTheRestThrough() {
        let bytes: [UInt8] = [0xFF, 0xD8, 0x12, 0x34] + SyntheticJPEG.segment(0xFE, Bytes.ascii("c"))
        let run = strip(bytes, .jpeg)
        #expect(run.output == bytes)
        #expect(run.stripper.passedThrough)
    }

    @Test func aSegmentLongerThanTheFileIsZeroedToTheEnd() {
        let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xF0] + Bytes.ascii("Exif\0\0II*\0 GPS")
        for options in [StripOptions(), StripOptions(keepOrientation: true)] {
            let run = strip(bytes, .jpeg, options)
            #expect(
                run.output == [0xFF, 0xD8, 0xFF, 0xFE, 0xFF, 0xF0]
                    + [UInt8](repeating: 0, count: bytes.count - 6))
            #expect(strip(bytes, .jpeg, StripOptions(mode: .remove)).output == [0xFF, 0xD8])
        }
    }

    @Test func aTruncatedMarkerLeavesUnchanged() {
        let bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE1, 0x00]
        let run = strip(bytes, .jpeg, cuts: [3])
        #expect(run.output == bytes)
        #expect(run.stripper.passedThrough)
    }

    @Test func heldBytesAreAtMostAHeaderBetweenWrites() {
        var stripper = MetadataStripper(format: .jpeg, options: StripOptions())
        var sink = ByteArraySink()
        stripper.write(Array(jpeg.bytes[0..<23]), into: &sink)
        #expect(stripper.heldBytes == 3)
        #expect(sink.bytes == Array(jpeg.bytes[0..<20]))
    }

    @Test func anUnselectedFormatPassesUntouched() {
        let run = strip(jpeg.bytes, .jpeg, StripOptions(formats: [.png]))
        #expect(run.output == jpeg.bytes)
        #expect(run.stripper.stripped.isEmpty && !run.stripper.passedThrough)
    }
}
