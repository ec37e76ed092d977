import HTTPCore
import Inspection

/// `MetadataStripper` on arbitrary bytes. The first byte picks the format (bits 0-1), remove
/// mode (bit 2), keepOrientation (bit 3), keepICC off (bit 4) and a split seed (bits 5-7);
/// the rest is the file, fed whole and then in pieces cut where a SplitMix64 seeded from the
/// input says. Properties: the split and whole outputs are equal, with equal reports; blank
/// mode keeps the length; remove mode never lengthens; patches lie inside the output; what is
/// held back between writes is bounded (a header, a 64 KiB EXIF block or a 1 MiB meta box).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStrip(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let control = data[0]
    let format = ImageFormat.allCases[Int(control & 3)]
    let mode: StripMode = control & 4 == 0 ? .blank : .remove
    let options = StripOptions(mode: mode, keepOrientation: control & 8 != 0, keepICC: control & 16 == 0)
    let file = UnsafeRawBufferPointer(start: data + 1, count: size - 1)

    var whole = MetadataStripper(format: format, options: options)
    var wholeSink = ByteArraySink()
    whole.write(file, into: &wholeSink)
    whole.finish(into: &wholeSink)

    var seed: UInt64 = UInt64(control >> 5)
    for byte in file.prefix(16) { seed = seed &* 31 &+ UInt64(byte) }
    var generator = SplitMix64(seed: seed)
    var split = MetadataStripper(format: format, options: options)
    var splitSink = ByteArraySink()
    var start = 0
    while start < file.count {
        let piece = 1 + Int(generator.next() % UInt64([1, 3, 17, 300, 5000][Int(generator.next() % 5)]))
        let end = min(file.count, start + piece)
        split.write(UnsafeRawBufferPointer(rebasing: file[start..<end]), into: &splitSink)
        precondition(split.heldBytes <= (1 << 20) + 64, "more held back than a meta box")
        start = end
    }
    split.finish(into: &splitSink)

    precondition(splitSink.bytes == wholeSink.bytes, "split and whole outputs differ")
    precondition(split.stripped == whole.stripped, "split and whole stripped lists differ")
    precondition(split.passedThrough == whole.passedThrough, "split and whole passedThrough differ")
    precondition(split.unstrippable == whole.unstrippable, "split and whole unstrippable differ")
    precondition(split.patches.map(\.offset) == whole.patches.map(\.offset), "split and whole patches differ")
    precondition(whole.heldBytes == 0, "bytes held after finish")
    if options.mode == .blank || format == .heic {
        precondition(wholeSink.bytes.count == file.count, "blank mode changed the length")
    } else {
        precondition(wholeSink.bytes.count <= file.count, "remove mode lengthened the file")
    }
    for patch in whole.patches {
        precondition(patch.offset >= 0 && Int(patch.offset) + patch.bytes.count <= wholeSink.bytes.count)
    }
    return 0
}
