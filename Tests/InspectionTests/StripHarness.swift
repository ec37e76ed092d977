import HTTPCore
import Inspection

#if canImport(Glibc)
    import Glibc
#endif

/// A sink that checks what it is given against an expected output without keeping it.
struct ComparingSink: ByteSink {
    let expected: UnsafeRawBufferPointer
    var position = 0
    var mismatch: Int?

    init(_ expected: UnsafeRawBufferPointer) {
        self.expected = expected
    }

    var matchedAll: Bool { mismatch == nil && position == expected.count }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        guard mismatch == nil, !bytes.isEmpty else { return }
        if bytes.count > expected.count - position
            || memcmp(expected.baseAddress! + position, bytes.baseAddress!, bytes.count) != 0
        {
            mismatch = position
        }
        position += bytes.count
    }
}

/// What one run of a stripper gave.
struct StripRun {
    var output: [UInt8]
    var stripper: MetadataStripper

    /// The output with the stripper's patches applied.
    var patched: [UInt8] {
        var bytes = output
        for patch in stripper.patches {
            let start = Int(patch.offset)
            bytes.replaceSubrange(start..<(start + patch.bytes.count), with: patch.bytes)
        }
        return bytes
    }
}

/// Strips `bytes` fed in pieces that end at `cuts` (sorted, within the input).
func strip(
    _ bytes: [UInt8], _ format: ImageFormat, _ options: StripOptions = StripOptions(), cuts: [Int] = []
)
    -> StripRun
{
    var stripper = MetadataStripper(format: format, options: options)
    var sink = ByteArraySink()
    var start = 0
    bytes.withUnsafeBytes { input in
        for cut in cuts + [input.count] {
            stripper.write(UnsafeRawBufferPointer(rebasing: input[start..<cut]), into: &sink)
            start = cut
        }
    }
    stripper.finish(into: &sink)
    return StripRun(output: sink.bytes, stripper: stripper)
}

/// Random cut points: pieces of 1 to `maxPiece` bytes.
func randomCuts(count: Int, maxPiece: Int, generator: inout SplitMix64) -> [Int] {
    var cuts: [Int] = []
    var at = 0
    while true {
        at += 1 + Int(generator.next() % UInt64(maxPiece))
        guard at < count else { return cuts }
        cuts.append(at)
    }
}

/// The first split point of `bytes` into two writes whose output differs from the one-shot
/// output (or whose report differs), or nil when every split gives the same.
func firstDifferingSplit(_ bytes: [UInt8], _ format: ImageFormat, _ options: StripOptions) -> Int? {
    let whole = strip(bytes, format, options)
    return whole.output.withUnsafeBytes { expected in
        bytes.withUnsafeBytes { input in
            for cut in 0...input.count {
                var stripper = MetadataStripper(format: format, options: options)
                var sink = ComparingSink(expected)
                stripper.write(UnsafeRawBufferPointer(rebasing: input[..<cut]), into: &sink)
                stripper.write(UnsafeRawBufferPointer(rebasing: input[cut...]), into: &sink)
                stripper.finish(into: &sink)
                guard sink.matchedAll, stripper.stripped == whole.stripper.stripped,
                    stripper.passedThrough == whole.stripper.passedThrough,
                    stripper.unstrippable == whole.stripper.unstrippable,
                    stripper.patches.map(\.offset) == whole.stripper.patches.map(\.offset)
                else { return cut }
            }
            return nil
        }
    }
}
