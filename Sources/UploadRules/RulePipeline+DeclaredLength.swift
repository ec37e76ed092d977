import MultipartEncoding

/// A re-encoded body whose length is declared before it ends.
///
/// On a route whose file is the last part and whose file content passes through unchanged
/// (no digest fields, no fields injected `last`), the re-encoded body's length follows from
/// the client's `Content-Length` once the file's head is written: everything after that point
/// is the file's content, then the client's closing delimiter (`CRLF--boundary--`) and
/// whatever follows it. The length declared assumes nothing follows, so it is never too small;
/// at the end, the new closing delimiter is followed by the difference, as transport padding
/// and an epilogue (RFC 2046 §5.1.1), which upstream parsers ignore. For the usual final CRLF
/// that difference is exactly the encoder's final CRLF; a body without one ends without one.
extension RulePipeline {
    /// The most bytes the declared length may leave after the closing delimiter: what follows
    /// the client's file beyond its closing delimiter (an epilogue, parts dropped after the
    /// file). Past it the body is refused rather than padded.
    public static var maxDeclaredTrailing: Int { 64 * 1024 }

    /// The re-encoded body's length for a client body of `clientLength` bytes whose closing
    /// delimiter is `clientCloseLength` bytes long, once `fileContent` is known and the body
    /// has not ended yet (else `nil`: a body that ended is as long as what was written).
    public func lengthAfterFileHead(clientLength: Int64, clientCloseLength: Int) -> Int64? {
        guard let fileContent, !encoder.isFinished else { return nil }
        let rest = clientLength - fileContent.input - Int64(clientCloseLength)
        guard rest >= 0 else { return nil }
        return fileContent.output + rest + Int64(encoder.closeDelimiterLength)
    }

    /// Declares the body's length (`lengthAfterFileHead`): the end will be padded to it.
    public mutating func declareLength(_ length: Int64) {
        declaredLength = length
    }

    /// Closes the body at exactly `length` bytes, or refuses it when that is impossible.
    mutating func finishDeclared(_ length: Int64) throws(MultipartEncodingError) {
        let trailing = length - output.written - Int64(encoder.closeDelimiterLength)
        guard trailing >= 0, trailing <= Int64(Self.maxDeclaredTrailing) else {
            refusal = Refusal(
                .bodyAfterFile,
                description:
                    "the body's end does not fit the Content-Length declared upstream when the file began (at most \(Self.maxDeclaredTrailing / 1024) KiB may follow the file)"
            )
            return
        }
        try encoder.finish(into: &output, trailing: Int(trailing))
    }
}
