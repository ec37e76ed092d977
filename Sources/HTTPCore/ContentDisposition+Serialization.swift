extension ContentDisposition {
    /// The canonical form sent upstream: `form-data; name="…"; filename="…"`.
    ///
    /// Values are always quoted. As current browsers do (WHATWG HTML, "multipart/form-data
    /// encoding algorithm"), `"` becomes `%22`, CR `%0D` and LF `%0A`; raw UTF-8 is kept and
    /// `filename*` is never written. A backslash is written as the quoted-pair `\\`, so every
    /// parser that reads escapes (PHP, Python, Werkzeug, Go, busboy) and this one read back
    /// the same bytes. Other parameters are dropped.
    public var serialized: [UInt8] {
        var out: [UInt8] = []
        appendSerialized(to: &out)
        return out
    }

    /// Appends `serialized` to `out`.
    public func appendSerialized(to out: inout [UInt8]) {
        Self.append(to: &out, atMost: serializedUpperBound) { appendSerialized(to: &$0) }
    }

    /// Appends `value` as a quoted string with the escaping described on `serialized`.
    public static func appendQuoted(_ value: some Collection<UInt8>, to out: inout [UInt8]) {
        let bytes = Array(value)
        append(to: &out, atMost: 3 * bytes.count + 2) { writer in
            bytes.withUnsafeBufferPointer { appendQuoted($0, to: &writer) }
        }
    }

    /// Appends to `out` what `write` writes through a `ByteWriter` (at most `bound` bytes): the
    /// array variants share the writer's escaping, not a copy of it.
    private static func append(to out: inout [UInt8], atMost bound: Int, _ write: (inout ByteWriter) -> Void)
    {
        let start = out.count
        out.append(contentsOf: repeatElement(0, count: bound))
        let written = out.withUnsafeMutableBufferPointer { buffer in
            var writer = ByteWriter(UnsafeMutableBufferPointer(rebasing: buffer[start...]))
            write(&writer)
            return writer.written.count
        }
        out.removeLast(bound - written)
    }

    /// The most bytes `appendSerialized` writes: every byte of the name and file name could
    /// become a three-byte escape.
    public var serializedUpperBound: Int { 32 + 3 * ((name?.count ?? 0) + (filename?.count ?? 0)) }

    /// Appends `serialized` through a writer with `serializedUpperBound` bytes free.
    public func appendSerialized(to out: inout ByteWriter) {
        out.append("form-data")
        if let name {
            out.append("; name=")
            name.withUnsafeBufferPointer { Self.appendQuoted($0, to: &out) }
        }
        if let filename {
            out.append("; filename=")
            filename.withUnsafeBufferPointer { Self.appendQuoted($0, to: &out) }
        }
    }

    /// `appendQuoted` into a writer with `3 * value.count + 2` bytes free.
    public static func appendQuoted(_ value: UnsafeBufferPointer<UInt8>, to out: inout ByteWriter) {
        out.append(UInt8(ascii: "\""))
        var start = 0
        var index = 0
        // Eight bytes at a time while a word holds no `"`, no backslash and no byte under 0x0E
        // (CR and LF among them): most names have nothing to escape.
        if let base = value.baseAddress {
            while value.count - index >= 8 {
                let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                if ByteClass.Word.hasByte(0x22, in: word) || ByteClass.Word.hasByte(0x5C, in: word)
                    || ByteClass.Word.hasByte(below: 0x0E, in: word)
                {
                    break
                }
                index += 8
            }
        }
        while index < value.count {
            let escape: StaticString
            switch value[index] {
            case UInt8(ascii: "\""): escape = "%22"
            case 0x0D: escape = "%0D"
            case 0x0A: escape = "%0A"
            case UInt8(ascii: "\\"): escape = #"\\"#
            default:
                index += 1
                continue
            }
            out.append(UnsafeBufferPointer(rebasing: value[start..<index]))
            out.append(escape)
            index += 1
            start = index
        }
        out.append(UnsafeBufferPointer(rebasing: value[start..<index]))
        out.append(UInt8(ascii: "\""))
    }
}
