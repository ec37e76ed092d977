import HTTPCore

extension ChunkedDecoder {
    /// The state after `byte` inside a chunk extension, or `nil` when RFC 9112 §7.1.1 does not
    /// allow it there:
    ///
    ///     chunk-ext     = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] )
    ///     chunk-ext-name = token
    ///     chunk-ext-val  = token / quoted-string
    ///
    /// So `5;` (no name), `5;a[=x` (not a token), `5;a=` (no value), `5;a="x` + CR (an open
    /// quote) and whitespace before the CRLF are refused. The CR that ends the size line moves
    /// to `.sizeLF`. Extensions are read and dropped: none is forwarded.
    static func extensionState(after byte: UInt8, in state: State) -> State? {
        let isSpace = byte == 0x20 || byte == 0x09
        let endsLine = byte == 0x0D
        switch state {
        case .extensionNameStart:
            if isSpace { return .extensionNameStart }
            return ByteClass.isTokenChar(byte) ? .extensionName : nil
        case .extensionName:
            if ByteClass.isTokenChar(byte) { return .extensionName }
            return afterName(byte, isSpace: isSpace, endsLine: endsLine)
        case .extensionNameEnd:
            if isSpace { return .extensionNameEnd }
            return endsLine ? nil : afterName(byte, isSpace: false, endsLine: false)
        case .extensionValueStart:
            if isSpace { return .extensionValueStart }
            if byte == UInt8(ascii: "\"") { return .extensionQuoted }
            return ByteClass.isTokenChar(byte) ? .extensionToken : nil
        case .extensionToken:
            if ByteClass.isTokenChar(byte) { return .extensionToken }
            return afterValue(byte, isSpace: isSpace, endsLine: endsLine)
        case .extensionQuoted:
            if byte == UInt8(ascii: "\"") { return .extensionQuotedEnd }
            if byte == UInt8(ascii: "\\") { return .extensionQuotedPair }
            return isQuotedText(byte) ? .extensionQuoted : nil
        case .extensionQuotedPair:
            // quoted-pair = "\" ( HTAB / SP / VCHAR / obs-text )
            return isSpace || (byte > 0x20 && byte != 0x7F) ? .extensionQuoted : nil
        case .extensionQuotedEnd:
            return afterValue(byte, isSpace: isSpace, endsLine: endsLine)
        case .extensionWhitespace:
            if isSpace { return .extensionWhitespace }
            return byte == UInt8(ascii: ";") ? .extensionNameStart : nil
        default:
            return nil
        }
    }

    /// After a name: a value, the next extension, whitespace, or the end of the line.
    private static func afterName(_ byte: UInt8, isSpace: Bool, endsLine: Bool) -> State? {
        if byte == UInt8(ascii: "=") { return .extensionValueStart }
        if byte == UInt8(ascii: ";") { return .extensionNameStart }
        if isSpace { return .extensionNameEnd }
        return endsLine ? .sizeLF : nil
    }

    /// After a value: the next extension, whitespace (then only `;`), or the end of the line.
    private static func afterValue(_ byte: UInt8, isSpace: Bool, endsLine: Bool) -> State? {
        if byte == UInt8(ascii: ";") { return .extensionNameStart }
        if isSpace { return .extensionWhitespace }
        return endsLine ? .sizeLF : nil
    }

    /// `qdtext` of RFC 9110 §5.6.4: HTAB, SP, `!`, `#`–`[`, `]`–`~` and obs-text.
    private static func isQuotedText(_ byte: UInt8) -> Bool {
        byte == 0x09 || byte == 0x20 || byte == 0x21 || (0x23...0x5B).contains(byte)
            || (0x5D...0x7E).contains(byte)
            || byte >= 0x80
    }
}
