import HTTPCore
import Inspection
import Testing

@Suite struct PNGStripperTests {
    let png = SyntheticPNG.make()

    @Test func blankModeRenamesAndZeroesTextChunksWithValidCRCs() {
        let run = strip(png.bytes, .png)
        #expect(run.output == png.blanked)
        #expect(run.stripper.stripped == ["png:tEXt", "png:iTXt", "png:zTXt", "png:tIME", "png:eXIf"])
        #expect(!run.stripper.passedThrough)
    }

    @Test func removeModeLeavesThemOut() {
        #expect(strip(png.bytes, .png, StripOptions(mode: .remove)).output == png.removed)
    }

    @Test func iccProfileGoesWithoutKeepICC() {
        let file = SyntheticPNG.make(stripICC: true)
        let run = strip(file.bytes, .png, StripOptions(keepICC: false))
        #expect(run.output == file.blanked)
        #expect(run.stripper.stripped.last == "png:iCCP")
        #expect(strip(file.bytes, .png, StripOptions(mode: .remove, keepICC: false)).output == file.removed)
    }

    @Test func aChunkLengthOver2To31IsMalformed() {
        let bytes =
            Array(png.bytes[0..<33]) + Bytes.be32(1 << 31) + Bytes.ascii("tEXt") + Bytes.ascii("secret")
        let run = strip(bytes, .png)
        #expect(run.output == bytes)
        #expect(run.stripper.passedThrough)
    }

    @Test func aBadSignaturePassesThrough() {
        var bytes = png.bytes
        bytes[1] = 0x51
        let run = strip(bytes, .png)
        #expect(run.output == bytes && run.stripper.passedThrough)
    }

    @Test func bytesAfterIENDAreATrailer() {
        let trailer = SyntheticPNG.chunk("tEXt", Bytes.ascii("a\0b"))
        let run = strip(png.bytes + trailer, .png)
        #expect(run.output == png.blanked + trailer)
        #expect(!run.stripper.passedThrough)
    }

    @Test func aTruncatedTextChunkIsZeroedAsFarAsItGoes() {
        let cut = png.bytes.count - 300
        let run = strip(Array(png.bytes[..<cut]), .png)
        #expect(run.output == Array(png.blanked[..<cut]))
    }
}
