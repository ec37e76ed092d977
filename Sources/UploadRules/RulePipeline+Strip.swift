import Inspection

/// `strip_metadata`: a file whose sniffed type is an image format the route strips goes through
/// a `MetadataStripper` between the parser and the rest of the pipeline (digests, inspection,
/// the encoder), so those see the bytes the upstream receives.
extension RulePipeline {
    /// A file part's head was written: its stripper, when its sniffed type is one the route strips.
    mutating func beginStrip(sniffed: String?) {
        guard let options = rules.strip, let sniffed, let format = ImageFormat(mediaType: sniffed),
            options.formats.contains(format)
        else { return }
        var chosen = options
        // A WebP's RIFF size leads the file: cutting a chunk would need it rewritten after it
        // went on. It is blanked instead (same length, the metadata as gone).
        if format == .webp, chosen.mode == .remove { chosen.mode = .blank }
        stripper = MetadataStripper(format: format, options: chosen)
    }

    /// The file's bytes through its stripper: what it writes goes on (`emit`).
    mutating func strip(_ bytes: UnsafeRawBufferPointer) {
        var pieces = stripPieces
        stripPieces = StripPieces()
        pieces.reset(input: bytes)
        stripper!.write(bytes, into: &pieces)
        pieces.visit { emit($0) }
        pieces.reset(input: UnsafeRawBufferPointer(start: nil, count: 0))
        stripPieces = pieces
    }

    /// The file ended: what its stripper still holds goes on, and the record says what was
    /// stripped. Metadata that could not be neutralised in the stream refuses the request.
    mutating func endStrip() {
        guard var stripper else { return }
        self.stripper = nil
        var pieces = stripPieces
        stripPieces = StripPieces()
        pieces.reset(input: UnsafeRawBufferPointer(start: nil, count: 0))
        stripper.finish(into: &pieces)
        pieces.visit { emit($0) }
        stripPieces = pieces
        records[records.count - 1].stripped = stripper.stripped
        if let reason = stripper.unstrippable {
            let name = records[records.count - 1].name
            refusal = RuleRefusal(
                .metadataNotStrippable,
                description: "part \(name): its metadata cannot be stripped: \(reason)")
        }
    }
}
