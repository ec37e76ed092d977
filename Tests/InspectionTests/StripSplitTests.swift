import HTTPCore
import Inspection
import Testing

/// Every split of a ~200 KiB file, random chunkings, and the blank-mode length invariant on
/// hostile inputs.
@Suite struct StripSplitTests {
    /// A ~200 KiB file of `format` with metadata before, inside and after its bulk.
    static func large(_ format: ImageFormat) -> [UInt8] {
        switch format {
        case .jpeg: SyntheticJPEG.make(entropy: 136_000, seed: 9).bytes
        case .png: SyntheticPNG.make(idat: 200_000).bytes
        case .webp: SyntheticWebP.make(vp8: 200_000).bytes
        case .heic: SyntheticHEIC.make(imageBytes: 200_000).bytes
        }
    }

    static let optionSets = [
        StripOptions(), StripOptions(mode: .remove, keepOrientation: true, keepICC: false),
    ]

    @Test(arguments: ImageFormat.allCases, [0, 1])
    func everySplitPointGivesTheOneShotOutput(format: ImageFormat, options: Int) {
        let bytes = Self.large(format)
        #expect(bytes.count > 200_000)
        let split = firstDifferingSplit(bytes, format, Self.optionSets[options])
        #expect(split == nil, "\(format) options \(options): split at \(split ?? -1) differs")
    }

    @Test func metaAfterMdatAtEverySplit() {
        let bytes = SyntheticHEIC.make(metaFirst: false, imageBytes: 5_000).bytes
        #expect(firstDifferingSplit(bytes, .heic, StripOptions()) == nil)
    }

    @Test(arguments: ImageFormat.allCases) func randomChunkingsGiveTheOneShotOutput(format: ImageFormat) {
        let seed: UInt64 = 20_240_601
        var generator = SplitMix64(seed: seed)
        let bytes = Self.large(format)
        for options in Self.optionSets {
            let whole = strip(bytes, format, options)
            for round in 0..<40 {
                let maxPiece = [1, 7, 64, 4096, 65_536][round % 5]
                let cuts = randomCuts(count: bytes.count, maxPiece: maxPiece, generator: &generator)
                let run = strip(bytes, format, options, cuts: cuts)
                #expect(run.output == whole.output, "\(format) seed \(seed) round \(round)")
                #expect(
                    run.stripper.stripped == whole.stripper.stripped, "\(format) seed \(seed) round \(round)")
            }
        }
    }

    /// Valid files mutated (bytes flipped, lengths changed, cut short) and plain garbage, with
    /// the format's signature or without.
    static func hostile(_ format: ImageFormat, _ generator: inout SplitMix64) -> [UInt8] {
        let valid: [UInt8]
        switch format {
        case .jpeg: valid = SyntheticJPEG.make(entropy: 300).bytes
        case .png: valid = SyntheticPNG.make().bytes
        case .webp: valid = SyntheticWebP.make().bytes
        case .heic: valid = SyntheticHEIC.make(metaFirst: generator.next() % 2 == 0).bytes
        }
        var bytes = valid
        switch generator.next() % 4 {
        case 0:
            for _ in 0..<(1 + generator.next() % 8) {
                bytes[Int(generator.next() % UInt64(bytes.count))] = UInt8(
                    truncatingIfNeeded: generator.next())
            }
        case 1:
            bytes = Array(bytes[..<Int(generator.next() % UInt64(bytes.count))])
        case 2:
            let at = Int(generator.next() % UInt64(bytes.count - 4))
            let value = [0xFF, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF, 1, 0][Int(generator.next() % 6)]
            bytes.replaceSubrange(at..<(at + 4), with: Bytes.be32(value))
        default:
            let prefix = Int(generator.next() % 24)
            bytes =
                Array(bytes[..<prefix])
                + (0..<(generator.next() % 2000)).map { _ in
                    [0xFF, 0x00, 0xD8, 0xE1, 0x01][Int(generator.next() % 5)]
                }
        }
        return bytes
    }

    @Test(arguments: ImageFormat.allCases) func blankModeKeepsTheLengthOfHostileInput(format: ImageFormat) {
        let seed: UInt64 = 77
        var generator = SplitMix64(seed: seed)
        for round in 0..<400 {
            let bytes = Self.hostile(format, &generator)
            let keep = generator.next() % 2 == 0
            let options = StripOptions(keepOrientation: keep, keepICC: !keep)
            let whole = strip(bytes, format, options)
            #expect(whole.output.count == bytes.count, "\(format) seed \(seed) round \(round)")
            let cuts = randomCuts(count: bytes.count, maxPiece: 1 + round % 50, generator: &generator)
            #expect(
                strip(bytes, format, options, cuts: cuts).output == whole.output,
                "seed \(seed) round \(round)")
            let removed = strip(bytes, format, StripOptions(mode: .remove, keepOrientation: keep), cuts: cuts)
            #expect(removed.output.count <= bytes.count, "seed \(seed) round \(round)")
            for patch in removed.stripper.patches {
                #expect(patch.offset >= 0 && Int(patch.offset) + patch.bytes.count <= removed.output.count)
            }
        }
    }
}
