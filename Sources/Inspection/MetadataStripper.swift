public import HTTPCore

/// Strips location and identity metadata from one image file as its bytes stream by: EXIF
/// (all of it, or all but Orientation with `keepOrientation`), XMP, IPTC and comments, and
/// ICC profiles unless `keepICC`. One stripper per file part: feed it the part's bytes in
/// reads of any size with `write(_:into:)`, then call `finish(into:)`.
///
/// Per format (each a value-type machine, `JPEGStripper`, `PNGStripper`, `WebPStripper`,
/// `HEICStripper`, dispatched with a switch):
/// - JPEG: APP1 (EXIF, XMP, extended XMP, any other APP1), APP13 (IPTC), COM, APP2
///   ICC_PROFILE without `keepICC`; in every image of the file (MPF secondary images too).
/// - PNG: `eXIf`, `tEXt`, `iTXt`, `zTXt`, `tIME`, `iCCP` without `keepICC`.
/// - WebP: `EXIF`, `XMP `, `ICCP` without `keepICC` (and their VP8X flags).
/// - HEIC/HEIF/AVIF: Exif items and XMP items (`mime`, `application/rdf+xml`).
///
/// In `.blank` mode the output has exactly the input's length, whatever the input: metadata
/// is overwritten in place (JPEG: a COM segment of zeros; PNG: a `blNK` chunk of zeros with
/// its CRC; WebP: a `JUNK` chunk of zeros; HEIC: the item's type becomes `blnk` and its data
/// zeros). In `.remove` mode JPEG segments, PNG chunks and WebP chunks are left out (WebP's
/// RIFF size is then fixed by `patches`); HEIC is blanked.
///
/// Bytes that do not change leave as slices of the caller's buffer, in the same call. Held
/// back between calls (`heldBytes`): a marker, chunk or box header (at most 39 bytes), an EXIF
/// segment or chunk gathered for its Orientation (at most 64 KiB), or a HEIC `meta` box (at
/// most 1 MiB) — never the file. A file that is malformed, truncated, or not of its declared
/// format passes unchanged from the point where it stops making sense (`passedThrough`). A
/// format not in `options.formats` passes unchanged without being read.
public struct MetadataStripper: Sendable {
    enum Machine: Sendable {
        case jpeg(JPEGStripper)
        case png(PNGStripper)
        case webp(WebPStripper)
        case heic(HEICStripper)
        /// A format not selected, a stripper finished, or one moved out for a mutation.
        case transparent
    }

    /// The format the stripper reads the file as.
    public let format: ImageFormat
    /// The options in force.
    public let options: StripOptions
    var machine: Machine
    var report = StripReport()

    /// A stripper for one file of `format`.
    public init(format: ImageFormat, options: StripOptions) {
        self.format = format
        self.options = options
        guard options.formats.contains(format) else {
            machine = .transparent
            return
        }
        switch format {
        case .jpeg: machine = .jpeg(JPEGStripper(options: options))
        case .png: machine = .png(PNGStripper(options: options))
        case .webp: machine = .webp(WebPStripper(options: options))
        case .heic: machine = .heic(HEICStripper(options: options))
        }
    }

    /// Strips the next bytes of the file into `sink`.
    ///
    /// `input` is borrowed for the call. Everything of it leaves in this call except the bytes
    /// held back (see `heldBytes`), which leave in a later call or in `finish(into:)`.
    public mutating func write<Sink: ByteSink>(_ input: UnsafeRawBufferPointer, into sink: inout Sink) {
        guard !input.isEmpty else { return }
        if report.passedThrough {
            sink.write(input)
            return
        }
        var walk = ByteWalk(input)
        switch machine {
        case .jpeg(var jpeg):
            machine = .transparent
            jpeg.write(&walk, into: &sink, report: &report)
            machine = .jpeg(jpeg)
        case .png(var png):
            machine = .transparent
            png.write(&walk, into: &sink, report: &report)
            machine = .png(png)
        case .webp(var webp):
            machine = .transparent
            webp.write(&walk, into: &sink, report: &report)
            machine = .webp(webp)
        case .heic(var heic):
            machine = .transparent
            heic.write(&walk, into: &sink, report: &report)
            machine = .heic(heic)
        case .transparent:
            walk.keep(walk.available)
        }
        walk.flush(into: &sink)
    }

    /// Ends the file: writes what is still held back (a truncated header unchanged, a
    /// truncated EXIF segment or chunk blanked, a truncated `meta` box unchanged) and completes
    /// `patches`. Later writes pass unchanged.
    public mutating func finish<Sink: ByteSink>(into sink: inout Sink) {
        switch machine {
        case .jpeg(var jpeg): jpeg.finish(into: &sink, report: &report)
        case .png(var png): png.finish(into: &sink, report: &report)
        case .webp(var webp): webp.finish(into: &sink, report: &report)
        case .heic(var heic): heic.finish(into: &sink, report: &report)
        case .transparent: break
        }
        machine = .transparent
    }

    /// What was stripped, each kind once, in order of first appearance: `exif`, `xmp`,
    /// `iptc` (APP13), `comment` (COM), `icc` (APP2 ICC_PROFILE) and `jpeg:APP1` (an APP1 of
    /// another kind) for JPEG; `png:` and the chunk type (`png:eXIf`, `png:tEXt`, `png:iTXt`,
    /// `png:zTXt`, `png:tIME`, `png:iCCP`); `webp:EXIF`, `webp:XMP`, `webp:ICCP`; `heic:Exif`,
    /// `heic:XMP`. An EXIF block reduced to its Orientation counts as stripped.
    public var stripped: [String] { report.stripped }

    /// Bytes read but not yet written (they leave in a later `write` or in `finish`).
    public var heldBytes: Int {
        switch machine {
        case .jpeg(let jpeg): jpeg.heldBytes
        case .png(let png): png.heldBytes
        case .webp(let webp): webp.heldBytes
        case .heic(let heic): heic.heldBytes
        case .transparent: 0
        }
    }

    /// Whether the file stopped making sense (bad signature, impossible length, truncated
    /// header, malformed or oversized HEIC `meta`) and the rest from there passed unchanged:
    /// metadata after that point was not stripped.
    public var passedThrough: Bool { report.passedThrough }

    /// Why metadata that was found could not be neutralised in the stream, or nil:
    /// - `heic: metadata items were sent before their meta box` (meta after mdat): `patches`
    ///   zero the items' data already written;
    /// - `webp: the RIFF size must shrink (remove mode)`: `patches` give the RIFF size;
    /// - `heic: a metadata item runs to the end of the file` (an extent of length 0) and
    ///   `heic: metadata sent before its meta box is too large to patch` (over 16 MiB): no
    ///   patch does it (`patchesComplete` is false).
    /// A caller refuses the file, or spools it and applies `patches`.
    public var unstrippable: String? { report.unstrippable }

    /// Whether applying `patches` to the spooled output finishes the job that `unstrippable`
    /// names (true when it is nil).
    public var patchesComplete: Bool { report.patchesComplete }

    /// Edits to output already written, for a caller that spools it: replace `bytes.count`
    /// bytes at `offset` (counted from the first byte this stripper wrote, 0-based) with
    /// `bytes`. Given for HEIC items sent before their `meta` box (zeros over their extents;
    /// in blank mode output and input offsets are equal), for WebP in remove mode (the 4-byte
    /// little-endian RIFF size at offset 4: the declared size less the bytes left out), and
    /// for a WebP VP8X EXIF flag kept for an Orientation that was not there (its flags byte).
    /// Complete only after `finish(into:)`; the patches never overlap.
    public var patches: [(offset: Int64, bytes: [UInt8])] { report.patches }
}

extension MetadataStripper {
    /// Strips the next bytes of the file from an array (tests, small bodies).
    public mutating func write<Sink: ByteSink>(_ bytes: [UInt8], into sink: inout Sink) {
        bytes.withUnsafeBytes { write($0, into: &sink) }
    }

    /// Strips a whole file held in memory.
    public static func strip(_ bytes: [UInt8], format: ImageFormat, options: StripOptions) -> [UInt8] {
        var stripper = MetadataStripper(format: format, options: options)
        var sink = ByteArraySink(capacity: bytes.count)
        stripper.write(bytes, into: &sink)
        stripper.finish(into: &sink)
        return sink.bytes
    }
}
